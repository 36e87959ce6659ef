// A fake OpenAI-compatible server (as vLLM, llama.cpp `llama-server` and LM Studio serve it) for tests:
// POST /v1/chat/completions with text and image_url parts, streaming (SSE, `data: [DONE]`) and not,
// GET /v1/models, errors in the OpenAI shape {"error": {"message", "type", "code"}}, a bearer token
// checked when one is configured. It records every request and can misbehave on demand.
//
// `response_format` as vLLM and llama.cpp take it: json_schema ({name, schema, strict}) and json_object
// (llama.cpp: with an optional `schema`); a server without it refuses with a 400. A reasoning model's
// thoughts come in `reasoning_content`, beside the answer, as vLLM's reasoning parsers send them.
//
// Listens on 127.0.0.1 with an ephemeral port; never talks to anything else.
import { LONG_DESCRIPTION } from './fake-ollama'
import { type StructuredReply, structuredContent } from './structured-reply'

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp' | 'unknown'

export type RecordedImage = { mime: string; format: ImageFormat; bytes: Uint8Array }

export type RecordedRequest = {
  method: string
  path: string
  /** Header names lower-cased. */
  headers: Record<string, string>
  body: unknown
  rawBody: string
  /** Images of the image_url parts, decoded from their data URLs. */
  images: RecordedImage[]
}

/** What a `reply` function gets to decide its answer. */
export type ReplyContext = { images: RecordedImage[]; prompt: string; system: string }

export type ModelEntry = { id: string; input_modalities?: string[] }

/** Answers no model should give as alt text: one character repeated, the request's prompt given back, a bare URL. */
export type JunkKind = 'repeated-char' | 'prompt-echo' | 'bare-url'

export type Behaviour = {
  /** Served models; strings are entries without modalities (as vLLM and llama.cpp list them). */
  models: (string | ModelEntry)[]
  /** The bearer token required; null: no Authorization needed (as a local server without --api-key). */
  apiKey: string | null
  /** The assistant's answer, or a function choosing it per request (a text-only follow-up has no images). */
  reply: string | ((context: ReplyContext) => string)
  delayMs: number
  /** Never answer a chat completion until the client aborts or stop(). */
  hang: boolean
  /** Answer chat completions with this status and an OpenAI-shaped error. */
  failStatus: number | null
  failMessage: string
  /** 200 with a body that is no chat completion: valid JSON of another shape (`true`), or text that is not JSON. */
  malformed: boolean | 'wrong-shape' | 'invalid-json'
  /**
   * Answer chat completions 200 with a content of `bytes` × "A" (or `head` and then `unit` repeated to
   * about `bytes`), made while it is sent (the fake never holds it): one JSON object, or (`streamed`) SSE
   * chunks, whatever `stream` or `max_tokens` the request said.
   */
  hugeReply: { bytes: number; streamed: boolean; head?: string; unit?: string } | null
  /** Answer GET /v1/models with its list plus a `padding` field making it `bytes` long. */
  hugeModels: { bytes: number } | null
  /** Answer with this kind of junk instead of `reply` (structured: as alt_text). */
  junk: JunkKind | null
  /** Refuse WebP data URLs with 400, as LM Studio does. */
  refuseWebp: boolean
  /**
   * `response_format`: 'schema' answers JSON following the schema (json_schema, or json_object with a
   * schema) or any JSON object (json_object alone); 'ignore' answers `reply` as if none was sent;
   * 'refuse' is a server without structured outputs: 400 for any type but "text".
   */
  responseFormat: 'schema' | 'ignore' | 'refuse'
  /** As the fake Ollama's: which images are complex, and the long description they get when one is asked for. */
  complex: ((image: RecordedImage) => boolean) | null
  longDescription: string
  /** The fields of a structured answer, over alt_text from `reply`, decorative false and the rest null. */
  structured: StructuredReply | null
  /** A reasoning model's thoughts, sent as message.reasoning_content (vLLM with --reasoning-parser); null: none. */
  reasoning: string | null
}

export type FakeOpenAi = {
  url: string
  readonly requests: RecordedRequest[]
  /** Bodies of POST /v1/chat/completions. */
  chatRequests(): Record<string, unknown>[]
  behave(changes: Partial<Behaviour>): void
  reset(): void
  /**
   * Let requests held by `hang` answer normally; or, with `failure`, answer that status and an OpenAI
   * error body with `message` instead (a server failing late).
   */
  release(failure?: { status: number; message?: string }): void
  /** Chat completions (and huge bodies) whose client went away before the answer. */
  aborted(): number
  /** Bytes of huge bodies handed to the socket since start or reset(). */
  bytesStreamed(): number
  stop(): Promise<void>
}

const DEFAULT_BEHAVIOUR: Behaviour = {
  models: ['llava'],
  apiKey: null,
  reply: 'Two children flying a red kite on a windy beach.',
  delayMs: 0,
  hang: false,
  failStatus: null,
  failMessage: 'CUDA error: out of memory',
  malformed: false,
  hugeReply: null,
  hugeModels: null,
  junk: null,
  refuseWebp: true,
  responseFormat: 'schema',
  structured: null,
  reasoning: null,
  complex: null,
  longDescription: LONG_DESCRIPTION,
}

const ERROR_TYPES: Record<number, string> = {
  400: 'BadRequestError',
  401: 'AuthenticationError',
  404: 'NotFoundError',
  429: 'RateLimitError',
  500: 'InternalServerError',
  503: 'ServiceUnavailableError',
}

const json = (status: number, value: unknown) => new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } })
/** The OpenAI error shape; vLLM puts the status in `code`, OpenAI a string. */
const openAiError = (status: number, message: string, code: string | number = status) =>
  json(status, { error: { message, type: ERROR_TYPES[status] ?? 'APIError', param: null, code } })

function sniff(bytes: Uint8Array): ImageFormat {
  if (bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return 'png'
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg'
  if (bytes[0] === 0x47 && bytes[1] === 0x49 && bytes[2] === 0x46) return 'gif'
  if (bytes[0] === 0x52 && bytes[1] === 0x49 && bytes[2] === 0x46 && bytes[3] === 0x46 && bytes[8] === 0x57) return 'webp'
  return 'unknown'
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * What `response_format` asks for: `schema` is the schema to follow (null: any JSON object), undefined
 * for plain text; or why the server refuses it.
 */
function responseFormat(value: unknown, current: Behaviour): { schema?: unknown } | { refusal: string } {
  if (value === undefined || value === null) return {}
  if (!isRecord(value) || typeof value.type !== 'string') return { refusal: 'response_format must be an object with a type' }
  if (value.type === 'text') return {}
  if (current.responseFormat === 'refuse') return { refusal: `response_format type must be "text", but got: ${value.type}` }
  if (current.responseFormat === 'ignore') return {}
  if (value.type === 'json_object') return { schema: isRecord(value.schema) ? value.schema : null }
  if (value.type !== 'json_schema') return { refusal: `response_format type must be one of "text", "json_object" or "json_schema", but got: ${value.type}` }
  const wrapper = value.json_schema
  if (!isRecord(wrapper) || typeof wrapper.name !== 'string' || wrapper.name === '') return { refusal: 'response_format.json_schema.name is required' }
  if (wrapper.schema !== undefined && !isRecord(wrapper.schema)) return { refusal: 'response_format.json_schema.schema must be an object' }
  return { schema: wrapper.schema ?? null }
}

const HUGE_CHUNK = 'A'.repeat(64 * 1024)

/** What `junk` answers: "AAAA…", the prompt's text as it came, or a URL alone. */
function junkReply(kind: JunkKind, prompt: string): string {
  if (kind === 'repeated-char') return 'A'.repeat(400)
  if (kind === 'prompt-echo') return prompt
  return 'https://images.example.com/uploads/2024/05/kite-beach-1234.jpg'
}

/** The text parts of the last user message. */
function lastUserText(messages: unknown[]): string {
  const user = messages.filter((m): m is Record<string, unknown> => isRecord(m) && m.role === 'user').at(-1)
  if (typeof user?.content === 'string') return user.content
  const parts = Array.isArray(user?.content) ? user.content : []
  return parts.map((part) => (isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('\n')
}

/** The system message's text ('' if none). */
function systemText(messages: unknown[]): string {
  const system = messages.find((m): m is Record<string, unknown> => isRecord(m) && m.role === 'system')
  return typeof system?.content === 'string' ? system.content : ''
}

export async function startFakeOpenAi(options: Partial<Behaviour> = {}): Promise<FakeOpenAi> {
  const start: Behaviour = { ...DEFAULT_BEHAVIOUR, ...options }
  let behaviour: Behaviour = { ...start }
  const requests: RecordedRequest[] = []
  let abortedCount = 0
  /** Resumers of requests held by `hang`; release() calls them. */
  const held = new Set<(failure?: { status: number; message?: string }) => void>()
  let streamedBytes = 0
  let created = 1_700_000_000
  const stopping = new AbortController()

  const entry = (model: string | ModelEntry) => (typeof model === 'string' ? { id: model } : model)

  /** `prefix`, `bytes` × "A" in 64 KiB pieces (or `piece` of each), `suffix`: made as the socket asks for more. */
  const hugeBody = (
    contentType: string,
    prefix: string,
    bytes: number,
    suffix: string,
    piece: (chunk: string) => string = (chunk) => chunk,
    chunk: string = HUGE_CHUNK,
  ) => {
    const encoder = new TextEncoder()
    let sent = 0
    let stage: 'prefix' | 'body' | 'done' = 'prefix'
    const push = (controller: ReadableStreamDefaultController<Uint8Array>, text: string) => {
      const encoded = encoder.encode(text)
      streamedBytes += encoded.byteLength
      controller.enqueue(encoded)
    }
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (stage === 'prefix') {
          stage = 'body'
          return push(controller, prefix)
        }
        if (stage === 'body' && sent < bytes) {
          sent += chunk.length
          return push(controller, piece(chunk))
        }
        if (stage === 'body') {
          stage = 'done'
          return push(controller, suffix)
        }
        controller.close()
      },
      cancel() {
        abortedCount++
      },
    })
    return new Response(stream, { status: 200, headers: { 'content-type': contentType } })
  }

  async function chat(request: Request, recorded: RecordedRequest, current: Behaviour): Promise<Response> {
    const body = recorded.body
    if (!isRecord(body)) return openAiError(400, 'Expecting value: line 1 column 1 (char 0)', 'invalid_request_error')
    const model = body.model
    if (typeof model !== 'string' || model === '') return openAiError(400, 'model is required', 'invalid_request_error')
    if (!current.models.some((m) => entry(m).id === model)) return openAiError(404, `The model \`${model}\` does not exist.`, 'model_not_found')
    if (!Array.isArray(body.messages) || body.messages.length === 0) return openAiError(400, 'messages must be a non-empty list', 'invalid_request_error')
    for (const message of body.messages) {
      if (!isRecord(message) || typeof message.role !== 'string') return openAiError(400, 'each message needs a role', 'invalid_request_error')
      if (!Array.isArray(message.content)) continue
      for (const part of message.content) {
        if (!isRecord(part)) return openAiError(400, 'content parts must be objects', 'invalid_request_error')
        if (part.type === 'text') continue
        if (part.type !== 'image_url') return openAiError(400, `unsupported content part type ${String(part.type)}`, 'invalid_request_error')
        const url = isRecord(part.image_url) ? part.image_url.url : undefined
        const match = typeof url === 'string' ? /^data:(image\/[a-z]+);base64,([A-Za-z0-9+/=]+)$/.exec(url) : null
        if (!match) return openAiError(400, 'image_url must be a base64 data URL', 'invalid_request_error')
        const bytes = new Uint8Array(Buffer.from(match[2] ?? '', 'base64'))
        const format = sniff(bytes)
        recorded.images.push({ mime: match[1] ?? '', format, bytes })
        if (current.refuseWebp && (format === 'webp' || match[1] === 'image/webp')) {
          return openAiError(400, "'url' field must be a base64 encoded image of type png or jpeg", 'invalid_request_error')
        }
        if (format === 'unknown') return openAiError(400, 'Failed to load image', 'invalid_request_error')
      }
    }
    const format = responseFormat(body.response_format, current)
    if ('refusal' in format) return openAiError(400, format.refusal, 'invalid_request_error')
    const exchange = AbortSignal.any([request.signal, stopping.signal])
    const wait = (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms)
        exchange.addEventListener(
          'abort',
          () => {
            clearTimeout(timer)
            resolve()
          },
          { once: true },
        )
      })
    if (current.hang) {
      let failure: { status: number; message?: string } | undefined
      await new Promise<void>((resolve) => {
        const resume = (given?: { status: number; message?: string }) => {
          failure = given
          held.delete(resume)
          resolve()
        }
        held.add(resume)
        exchange.addEventListener('abort', () => resume(), { once: true })
      })
      if (failure && !request.signal.aborted) return openAiError(failure.status, failure.message ?? current.failMessage)
    } else if (current.delayMs > 0) await wait(current.delayMs)
    if (request.signal.aborted) {
      abortedCount++
      return new Response(null, { status: 499 })
    }
    if (current.failStatus !== null) return openAiError(current.failStatus, current.failMessage)
    if (current.malformed === 'invalid-json') {
      return new Response('{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"A red', {
        status: 200,
        headers: { 'content-type': 'application/json' },
      })
    }
    if (current.malformed) return json(200, { status: 'ok', result: 'A red square.' })

    const id = `chatcmpl-${++created}`
    const huge = current.hugeReply
    if (huge?.streamed) {
      const piece = (content: string) =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`
      const unitChunk = huge.unit === undefined ? undefined : huge.unit.repeat(Math.ceil(HUGE_CHUNK.length / huge.unit.length))
      return hugeBody('text/event-stream; charset=utf-8', piece(huge.head ?? ''), huge.bytes, 'data: [DONE]\n\n', piece, unitChunk)
    }
    if (huge) {
      const [prefix, suffix] = JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: '\u0000' }, finish_reason: 'length' }],
      }).split('\\u0000')
      const inJson = (text: string) => JSON.stringify(text).slice(1, -1)
      const unitChunk = huge.unit === undefined ? undefined : inJson(huge.unit).repeat(Math.ceil(HUGE_CHUNK.length / inJson(huge.unit).length))
      return hugeBody('application/json', `${prefix ?? ''}${inJson(huge.head ?? '')}`, huge.bytes, suffix ?? '', undefined, unitChunk)
    }
    const prompt = lastUserText(body.messages)
    const scripted = typeof current.reply === 'function' ? current.reply({ images: recorded.images, prompt, system: systemText(body.messages) }) : current.reply
    const reply = current.junk === null ? scripted : junkReply(current.junk, prompt)
    const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : null
    const image = recorded.images[0]
    const complex = current.complex !== null && image !== undefined && current.complex(image)
    const longAsked = JSON.stringify(body.messages).includes('LONG DESCRIPTION:')
    const text =
      format.schema === undefined
        ? complex && longAsked
          ? `${reply}\nLONG DESCRIPTION: ${current.longDescription}`
          : reply
        : structuredContent(format.schema, {
            decorative: false,
            decorative_reason: null,
            alt_text: reply,
            text_in_image: null,
            long_description: complex ? current.longDescription : null,
            ...current.structured,
          })
    const words = text.match(/\s*\S+/g) ?? []
    const tokens = maxTokens === null ? words : words.slice(0, maxTokens)
    const finish = tokens.length < words.length ? 'length' : 'stop'
    const usage = { prompt_tokens: 600, completion_tokens: tokens.length, total_tokens: 600 + tokens.length }
    if (body.stream === true) {
      const encoder = new TextEncoder()
      const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
        encoder.encode(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`,
        )
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(chunk({ role: 'assistant', content: '' }, null))
          if (current.reasoning !== null) controller.enqueue(chunk({ reasoning_content: current.reasoning }, null))
          for (const token of tokens) controller.enqueue(chunk({ content: token }, null))
          controller.enqueue(chunk({}, finish))
          controller.enqueue(encoder.encode('data: [DONE]\n\n'))
          controller.close()
        },
      })
      return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' } })
    }
    return json(200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: tokens.join('').trim(), ...(current.reasoning !== null && { reasoning_content: current.reasoning }) },
          logprobs: null,
          finish_reason: finish,
        },
      ],
      usage,
    })
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const rawBody = request.method === 'GET' ? '' : await request.text()
      let body: unknown = null
      try {
        body = rawBody ? JSON.parse(rawBody) : null
      } catch {
        body = null
      }
      const recorded: RecordedRequest = { method: request.method, path: url.pathname, headers: Object.fromEntries(request.headers), body, rawBody, images: [] }
      requests.push(recorded)
      const current = behaviour
      if (current.apiKey !== null && request.headers.get('authorization') !== `Bearer ${current.apiKey}`) {
        return openAiError(401, 'Incorrect API key provided.', 'invalid_api_key')
      }
      if (url.pathname === '/v1/models' && request.method === 'GET') {
        const list = { object: 'list', data: current.models.map((m) => ({ ...entry(m), object: 'model', created, owned_by: 'fake' })) }
        if (current.hugeModels === null) return json(200, list)
        return hugeBody('application/json', `${JSON.stringify(list).slice(0, -1)},"padding":"`, current.hugeModels.bytes, '"}')
      }
      // A `reply` that throws is a server failure, as the fake Ollama answers it.
      if (url.pathname === '/v1/chat/completions' && request.method === 'POST')
        return chat(request, recorded, current).catch((error: unknown) =>
          openAiError(500, `fake openai: ${error instanceof Error ? error.message : String(error)}`),
        )
      return openAiError(404, `Not Found: ${request.method} ${url.pathname}`)
    },
  })

  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    chatRequests: () => requests.filter((r) => r.path === '/v1/chat/completions' && isRecord(r.body)).map((r) => r.body as Record<string, unknown>),
    behave(changes) {
      behaviour = { ...behaviour, ...changes }
    },
    reset() {
      requests.length = 0
      abortedCount = 0
      streamedBytes = 0
      behaviour = { ...start }
    },
    release(failure) {
      for (const resume of [...held]) resume(failure)
    },
    aborted: () => abortedCount,
    bytesStreamed: () => streamedBytes,
    async stop() {
      stopping.abort()
      await server.stop(true)
    },
  }
}
