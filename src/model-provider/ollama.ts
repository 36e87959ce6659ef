// Ollama through the official client. Each call gets a fetch bound to its abort signal: the client
// passes no signal of its own for non-streaming calls, and a deadline must end the upstream request.
// Every body is read up to a byte cap (capped-fetch.ts): answers to MAX_MODEL_ANSWER_BYTES, metadata
// (/api/tags, /api/show) to MAX_MODEL_METADATA_BYTES.
import { Ollama } from 'ollama'
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

/** `llava` means `llava:latest`, as in Ollama itself. */
export function sameModel(installed: string, wanted: string): boolean {
  const withTag = (name: string) => (name.includes(':') ? name : `${name}:latest`)
  return withTag(installed.toLowerCase()) === withTag(wanted.toLowerCase())
}

export function createOllamaProvider(options: { host: string; model: string; fetch?: FetchFn; temperature?: number }): ModelProvider {
  const { host, model } = options
  const baseFetch = options.fetch ?? fetch
  const client = (signal: AbortSignal | undefined, maxBytes: number) =>
    new Ollama({
      host,
      fetch: cappedFetch((input, init) => baseFetch(input, { ...init, signal: signal ?? init?.signal }), maxBytes) as typeof fetch,
    })

  const classify = (error: unknown, signal: AbortSignal): ModelError => {
    if (error instanceof ModelError) return error
    if (signal.aborted) return new ModelError('aborted', `model call aborted: ${errorText(signal.reason)}`)
    const over = tooLarge(error)
    if (over) return new ModelError('too_large', `Ollama at ${host} sent an answer over the limit of ${over.limitBytes} bytes; reading stopped there`)
    const status = (error as { status_code?: number }).status_code
    if ((error as { name?: string }).name === 'ResponseError' && typeof status === 'number') {
      if (status === 404) return new ModelError('model_not_found', `model ${model} not found at ${host}: run "ollama pull ${model}"`, status)
      return new ModelError('upstream', `Ollama at ${host} answered ${status}: ${errorText(error)}`, status)
    }
    if (error instanceof SyntaxError) return new ModelError('malformed', `Ollama at ${host} sent a malformed answer: ${error.message}`)
    return new ModelError('unreachable', `Ollama not reachable at ${host}: ${errorText(error)}`)
  }

  /** This host's own memory of refusing structured answers. */
  const askStructuredOrPlain = structureFallback()

  return {
    name: 'ollama',
    model,
    async health(signal): Promise<ModelHealth> {
      const notPulled = `model ${model} is not pulled on the model server: run "ollama pull ${model}"`
      try {
        const ollama = client(signal, MAX_MODEL_METADATA_BYTES)
        const { models } = await ollama.list()
        if (!models.some((m) => sameModel(m.name, model) || sameModel(m.model, model))) {
          return { ok: false, detail: `model ${model} not found at ${host}: run "ollama pull ${model}"`, publicDetail: notPulled, problem: 'model_missing' }
        }
        // Older Ollama versions do not report capabilities; then the name is all we can check.
        const { capabilities } = (await ollama.show({ model })) as { capabilities?: string[] }
        if (Array.isArray(capabilities) && !capabilities.includes('vision')) {
          const cannotSee = `model ${model} cannot see images (capabilities: ${capabilities.join(', ') || 'none'}); choose a vision model such as llava`
          return { ok: false, detail: `${cannotSee} (at ${host})`, publicDetail: cannotSee, problem: 'no_vision' }
        }
        return { ok: true, detail: `model ${model} present at ${host}`, publicDetail: `model ${model} present` }
      } catch (error) {
        const failure = classify(error, signal ?? new AbortController().signal)
        const publicDetail = publicHealthFailure(failure, notPulled)
        const detail = failure.kind === 'aborted' ? `Ollama at ${host} did not answer in time` : failure.message
        return { ok: false, detail, publicDetail, problem: healthProblem(failure) }
      }
    },

    describe(request: DescribeRequest): Promise<DescribeAnswer> {
      const { signal } = request
      return askStructuredOrPlain(request, async (structured) => {
        // `format` with a JSON schema (Ollama 0.5 and later) constrains the answer to it; older versions
        // refuse an object there with a 400, and the fallback asks again in plain text.
        const ask = structured ? request.structured : undefined
        try {
          const response = await client(signal, MAX_MODEL_ANSWER_BYTES).chat({
            model,
            stream: false,
            // Thinking models (qwen3-vl, qwen3.5) otherwise put the whole answer in `thinking`. Ollama accepts
            // `false` for every model (it refuses only `true` for one that cannot think); older versions ignore it.
            think: false,
            ...(ask ? { format: ask.schema.schema } : {}),
            messages: [
              { role: 'system', content: ask?.system ?? request.system },
              // Bytes, not a base64 string: the client checks a string with fs.existsSync (slow, and a path
              // would be read from disk); bytes it encodes natively.
              { role: 'user', content: ask?.prompt ?? request.prompt, ...(request.image ? { images: [request.image.data] } : {}) },
            ],
            options: { temperature: options.temperature ?? 0.2, num_predict: ask?.maxTokens ?? request.maxTokens },
          })
          const content = (response as { message?: { content?: unknown } })?.message?.content
          if (typeof content !== 'string') throw new ModelError('malformed', `Ollama at ${host} answered without message.content`)
          return content
        } catch (error) {
          throw classify(error, signal)
        }
      })
    },
  }
}
