// OpenAI-compatible chat completions (vLLM, llama.cpp `llama-server`, LM Studio, LocalAI) through the
// official client. The image goes as an `image_url` part holding a JPEG or PNG data URL (LM Studio refuses
// WebP; the intake only ever prepares JPEG or PNG). No retries: the alt-text deadline governs, and every
// call is bound to its abort signal. The API key travels only in the Authorization header, never in a message.
// Every body is read up to a byte cap (capped-fetch.ts): chat completions to MAX_MODEL_ANSWER_BYTES,
// /v1/models to MAX_MODEL_METADATA_BYTES.
import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai'
import { MAX_MODEL_ANSWER_BYTES, MAX_MODEL_METADATA_BYTES } from '../shared/limits'
import { errorText } from '../shared/wording'
import { cappedFetch, type FetchFn, tooLarge } from './capped-fetch'
import {
  type DescribeAnswer,
  type DescribeRequest,
  healthProblem,
  ModelError,
  type ModelHealth,
  type ModelProvider,
  publicHealthFailure,
  structureFallback,
} from './provider'

/** What a /v1/models entry may say about its inputs: OpenRouter-style `architecture.input_modalities`, or a top-level list. */
function inputModalities(entry: Record<string, unknown>): string[] | null {
  const architecture = entry.architecture as Record<string, unknown> | undefined
  const listed = entry.input_modalities ?? architecture?.input_modalities ?? (entry.modalities as Record<string, unknown> | undefined)?.input
  return Array.isArray(listed) ? listed.filter((m): m is string => typeof m === 'string') : null
}

export function createOpenAiProvider(options: { host: string; model: string; apiKey?: string; fetch?: FetchFn; temperature?: number }): ModelProvider {
  const { host, model, apiKey } = options
  const baseFetch = options.fetch ?? fetch
  /** One client per cap: answers and metadata are read with different limits. */
  const clientWith = (maxBytes: number) =>
    new OpenAI({
      baseURL: `${host}/v1`,
      // The client insists on a key; without one configured, the placeholder is never sent (a null default
      // header omits Authorization), as local servers without --api-key expect.
      apiKey: apiKey ?? 'unused',
      defaultHeaders: apiKey === undefined ? { Authorization: null } : undefined,
      adminAPIKey: null,
      organization: null,
      project: null,
      maxRetries: 0,
      logLevel: 'off',
      fetch: cappedFetch(baseFetch, maxBytes) as typeof fetch,
    })
  const answers = clientWith(MAX_MODEL_ANSWER_BYTES)
  const metadata = clientWith(MAX_MODEL_METADATA_BYTES)

  const classify = (error: unknown, signal: AbortSignal): ModelError => {
    if (error instanceof ModelError) return error
    if (signal.aborted || error instanceof APIUserAbortError) return new ModelError('aborted', `model call aborted: ${errorText(signal.reason)}`)
    const over = tooLarge(error)
    if (over) return new ModelError('too_large', `model server at ${host} sent an answer over the limit of ${over.limitBytes} bytes; reading stopped there`)
    if (error instanceof APIConnectionError) return new ModelError('unreachable', `model server not reachable at ${host}: ${errorText(error.cause ?? error)}`)
    if (error instanceof APIError && typeof error.status === 'number') {
      if (error.status === 404) return new ModelError('model_not_found', `model ${model} not found at ${host}: ${error.message}`, 404)
      return new ModelError('upstream', `model server at ${host} answered ${error.status}: ${error.message}`, error.status)
    }
    if (error instanceof SyntaxError) return new ModelError('malformed', `model server at ${host} sent a malformed answer: ${error.message}`)
    return new ModelError('unreachable', `model server not reachable at ${host}: ${errorText(error)}`)
  }

  /** This host's own memory of refusing structured answers. */
  const askStructuredOrPlain = structureFallback()

  return {
    name: 'openai',
    model,
    async health(signal): Promise<ModelHealth> {
      const missing = `model ${model} is not served by the model server`
      const abort = signal ?? new AbortController().signal
      try {
        const page = await metadata.models.list({ signal: abort })
        const entries = (page.data ?? []) as unknown as Record<string, unknown>[]
        if (!Array.isArray(entries)) throw new ModelError('malformed', `model server at ${host} sent a model list without data`)
        const entry = entries.find((e) => e.id === model)
        if (entry === undefined) return { ok: false, detail: `model ${model} not listed by ${host}/v1/models`, publicDetail: missing, problem: 'model_missing' }
        const modalities = inputModalities(entry)
        if (modalities !== null && !modalities.includes('image')) {
          const cannotSee = `model ${model} cannot see images (input modalities: ${modalities.join(', ') || 'none'}); choose a vision model`
          return { ok: false, detail: `${cannotSee} (at ${host})`, publicDetail: cannotSee, problem: 'no_vision' }
        }
        return { ok: true, detail: `model ${model} listed at ${host}`, publicDetail: `model ${model} present` }
      } catch (error) {
        const failure = classify(error, abort)
        const publicDetail = publicHealthFailure(failure, missing)
        const detail = failure.kind === 'aborted' ? `model server at ${host} did not answer in time` : failure.message
        return { ok: false, detail, publicDetail, problem: healthProblem(failure) }
      }
    },

    describe(request: DescribeRequest): Promise<DescribeAnswer> {
      const { signal } = request
      const { image } = request
      const picture = image && { type: 'image_url' as const, image_url: { url: `data:${image.mime};base64,${Buffer.from(image.data).toString('base64')}` } }
      return askStructuredOrPlain(request, async (structured) => {
        // `response_format` json_schema (vLLM, llama.cpp, LM Studio, Ollama's /v1); a server without it
        // refuses with a 400, and the fallback asks again in plain text.
        const ask = structured ? request.structured : undefined
        try {
          const completion = await answers.chat.completions.create(
            {
              model,
              stream: false,
              max_tokens: ask?.maxTokens ?? request.maxTokens,
              temperature: options.temperature ?? 0.2,
              ...(ask ? { response_format: { type: 'json_schema' as const, json_schema: { ...ask.schema, strict: true } } } : {}),
              messages: [
                { role: 'system', content: ask?.system ?? request.system },
                {
                  role: 'user',
                  content: [{ type: 'text', text: ask?.prompt ?? request.prompt }, ...(picture ? [picture] : [])],
                },
              ],
            },
            { signal },
          )
          const message = (completion as { choices?: { message?: { content?: unknown } }[] } | undefined)?.choices?.[0]?.message
          const content = message?.content
          // A structured call may end with content null (a refusal, or a reasoning model that spent its
          // tokens thinking): no JSON, which the caller answers with one plain-text call.
          if (ask && message && content === null) return ''
          if (typeof content !== 'string') throw new ModelError('malformed', `model server at ${host} answered without choices[0].message.content`)
          return content
        } catch (error) {
          throw classify(error, signal)
        }
      })
    },
  }
}
