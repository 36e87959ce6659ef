// A fake Ollama server for tests: no model weights can be downloaded here, so the service
// talks to this instead. It speaks Ollama's HTTP protocol as the Go server does (routes,
// status codes, {"error": ...} bodies, NDJSON streaming, stream defaulting to true, headers
// only sent with the first token) so the official `ollama` client and our own code cannot
// tell the difference. It records every request and can misbehave on demand.
//
// Listens on 127.0.0.1 with an ephemeral port; never talks to anything else.
import { type StructuredReply, structuredContent } from './structured-reply'

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp' | 'unknown'

/** An image from a chat/generate request, base64-decoded. */
export type RecordedImage = {
  bytes: Uint8Array
  /** Sniffed from the magic bytes, not trusted from anything the client said. */
  format: ImageFormat
  /** From the image header; null when the header is missing or unreadable. */
  width: number | null
  height: number | null
}

export type RecordedRequest = {
  method: string
  /** URL path without the query string, e.g. "/api/chat". */
  path: string
  /** Header names lower-cased. */
  headers: Record<string, string>
  /** Parsed JSON body; null when there was no body or it was not JSON. */
  body: unknown
  /** The body exactly as received. */
  rawBody: string
  /** Decoded images: `images` of /api/generate, or every message's `images` of /api/chat, in order. */
  images: RecordedImage[]
  /** Date.now() when the request arrived. */
  receivedAt: number
}

export type ChatMessageBody = {
  role: string
  content: string
  /** Base64, exactly as sent. Decoded copies are in RecordedRequest.images. */
  images?: string[]
  [field: string]: unknown
}

export type ChatRequestBody = {
  model: string
  messages?: ChatMessageBody[]
  stream?: boolean
  options?: Record<string, unknown>
  format?: unknown
  keep_alive?: string | number
  think?: boolean | string
  [field: string]: unknown
}

export type GenerateRequestBody = {
  model: string
  prompt?: string
  system?: string
  images?: string[]
  stream?: boolean
  options?: Record<string, unknown>
  format?: unknown
  keep_alive?: string | number
  raw?: boolean
  think?: boolean | string
  [field: string]: unknown
}

/** What a `reply` function gets to decide its answer. */
export type ReplyContext = {
  endpoint: 'chat' | 'generate'
  /** The model name as the client sent it. */
  model: string
  /** generate: `prompt`; chat: content of the last user message ('' if none). */
  prompt: string
  /** chat: the messages as sent; generate: empty. */
  messages: ChatMessageBody[]
  images: RecordedImage[]
  options: Record<string, unknown>
  /** 1 for the first valid chat/generate request since start or reset(), 2 for the next, ... */
  callNumber: number
  body: ChatRequestBody | GenerateRequestBody
}

export type MalformedKind =
  /** 200 + JSON cut off mid-object (like a connection dropped by a proxy). */
  | 'truncated-json'
  /** 200 + text/html error page (like a misconfigured reverse proxy). */
  | 'html'
  /** 200 + valid JSON that is not an Ollama response (no message/response, no done). */
  | 'wrong-shape'
  /** 200 + NDJSON whose second line is not JSON (a proxy mangling a stream), whatever `stream` asked. */
  | 'bad-stream-line'
  /** 200 + the start of a JSON answer, then the connection drops mid-body (a runner or proxy dying). */
  | 'cut-off'

/** Answers no model should give as alt text: one character repeated, the request's prompt given back, a bare URL. */
export type JunkKind = 'repeated-char' | 'prompt-echo' | 'bare-url'

/** How requests held by `hang` end when released with a failure. */
export type HeldFailure = { status: number; message?: string }

/** A body of `bytes` bytes (about), made while it is sent, so the fake never holds it. */
export type HugeBody = { bytes: number }

export type Behaviour = {
  /** Installed models. `llava` and `llava:latest` name the same model, as in Ollama. */
  models: string[]
  /** Reported by /api/show for every model; chat/generate enforce 'vision' (images) and 'thinking' (think). */
  capabilities: string[]
  /** Reported by /api/version. */
  version: string
  /** The assistant's answer, or a function choosing it per request. */
  reply: string | ((context: ReplyContext) => string)
  /** Time before answering. Streaming spreads the chunks over this time (first chunk after one slice). */
  delayMs: number
  /** Never answer chat/generate: no status, no headers, until the client aborts, release() or stop(). */
  hang: boolean
  /** Streaming only: send this many content chunks, then go silent with the connection open. */
  stallAfterChunks: number | null
  /** Answer chat/generate with this HTTP status and {"error": failError} (after delayMs). */
  failStatus: number | null
  failError: string
  /** Streaming: send this many chunks, then an {"error": failError} line, as Ollama does when the runner dies mid-answer. Non-streaming: 500. */
  failAfterChunks: number | null
  /** Answer chat/generate 200 with a body that is not a valid Ollama response. `true` means 'truncated-json'. */
  malformed: boolean | MalformedKind
  /** Answer with a valid response whose content is "". */
  emptyReply: boolean
  /**
   * Answer chat/generate 200 with a content of `bytes` × "A" (or `head` and then `unit` repeated to about
   * `bytes`): one JSON object, or (`streamed`) NDJSON chunk lines and a done line, whatever `stream` the
   * request said or its num_predict (a runaway model or a hostile host).
   */
  hugeReply: (HugeBody & { streamed: boolean; head?: string; unit?: string }) | null
  /** Answer this metadata route 200 with its usual JSON plus a `padding` field making it `bytes` long. */
  hugeMetadata: (HugeBody & { route: '/api/tags' | '/api/show' | '/api/version' }) | null
  /** Answer chat/generate with this kind of junk instead of `reply` (structured: as alt_text). */
  junk: JunkKind | null
  /** Images whose bytes are not PNG/JPEG/GIF/WebP get a 500, as the real runner cannot decode them. */
  rejectUndecodableImages: boolean
  /**
   * Which images this "model" finds purely decorative. When a request's prompt asks whether the image is
   * purely decorative (its text says "purely decorative") and this returns true for its first image, the
   * answer is "DECORATIVE: <decorativeReason>" instead of `reply`. Null (the default): never.
   */
  decorative: ((image: RecordedImage) => boolean) | null
  decorativeReason: string
  /**
   * Which images this "model" finds complex (a chart, a diagram). When a request asks for a long
   * description (a plain prompt that says "LONG DESCRIPTION:", or a schema with long_description) and
   * this returns true for its first image, the answer carries `longDescription`: after `reply` on a line
   * "LONG DESCRIPTION: …", or as the long_description field. Null (the default): never.
   */
  complex: ((image: RecordedImage) => boolean) | null
  longDescription: string
  /**
   * `format` (structured outputs, Ollama 0.5 and later): 'schema' answers JSON following the schema
   * sent (or any JSON object for "json"); 'ignore' answers as if no format was sent, as a model that
   * does not follow it; 'refuse' is a server from before 0.5, whose `format` is a string: a schema object
   * gets 400 "cannot unmarshal object", "json" is honoured.
   */
  formatSupport: 'schema' | 'ignore' | 'refuse'
  /**
   * The fields of a structured answer, over the ones made from the rest of the behaviour (alt_text from
   * `reply`, decorative and decorative_reason from `decorative`, text_in_image null). A field the
   * schema does not have is left out; one it requires and nobody gave gets its type's empty value.
   */
  structured: StructuredReply | ((context: ReplyContext) => StructuredReply) | null
  /** A model with the `thinking` capability asked without `think: false` reasons first, into message.thinking (as qwen3-vl). */
  thinking: string
  /** Such a model spends its answer on thinking: `content` is "" (qwen3-vl without `think: false`). */
  thinkingOnly: boolean
}

export type FakeOllama = {
  /** e.g. "http://127.0.0.1:54321", no trailing slash. */
  url: string
  port: number
  /** Every request received, in arrival order. Cleared in place by reset(). */
  readonly requests: RecordedRequest[]
  /** Bodies of POST /api/chat requests whose body was a JSON object. */
  chatRequests(): ChatRequestBody[]
  /** Bodies of POST /api/generate requests whose body was a JSON object. */
  generateRequests(): GenerateRequestBody[]
  /** Change behaviour for requests arriving from now on (requests in progress keep theirs). */
  behave(changes: Partial<Behaviour>): void
  /** Clear requests and counters, restore the behaviour given at start, release hanging requests. */
  reset(): void
  /**
   * Let requests held by `hang` or `stallAfterChunks` carry on and answer normally; or, with `failure`,
   * those held by `hang` answer that status and {"error": message} instead (a runner failing late).
   */
  release(failure?: HeldFailure): void
  /** Requests currently being served (a streaming answer counts until its last line is sent). */
  inFlight(): number
  /** Requests whose client went away before the answer was completely sent (stop() does not count). */
  aborted(): number
  /** Bytes of streamed bodies (streaming answers, huge ones) handed to the socket since start or reset(). */
  bytesStreamed(): number
  /** Resolves once predicate() is true; checks every few ms; rejects after timeoutMs (default 5000). */
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>
  /** Closes the listener and every open connection, hanging ones included. Idempotent. */
  stop(): Promise<void>
}

/** What the fakes answer as the long description of a complex image: a bar chart's data in order and its conclusion. */
export const LONG_DESCRIPTION =
  'A bar chart of monthly sales in 2024, in thousands of euros. January 12, February 15, March 11, April 18, May 22 and June 25. Sales roughly doubled over the half year, with a dip in March.'

const DEFAULT_BEHAVIOUR: Behaviour = {
  models: ['llava:latest'],
  capabilities: ['completion', 'vision'],
  version: '0.12.6',
  reply: 'A red square on a white background.',
  delayMs: 0,
  hang: false,
  stallAfterChunks: null,
  failStatus: null,
  failError: 'llama runner process has terminated',
  failAfterChunks: null,
  malformed: false,
  emptyReply: false,
  hugeReply: null,
  hugeMetadata: null,
  junk: null,
  rejectUndecodableImages: true,
  decorative: null,
  decorativeReason: 'a plain background pattern with no information',
  complex: null,
  longDescription: LONG_DESCRIPTION,
  formatSupport: 'schema',
  structured: null,
  thinking: 'The user wants alt text. Let me look at the image: it shows a red square on a white background.',
  thinkingOnly: false,
}

// Content types exactly as gin writes them.
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'
const NDJSON_CONTENT_TYPE = 'application/x-ndjson'
const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8'

// llava's CLIP projector turns one image into 576 prompt tokens; used for plausible counters.
const PROMPT_TOKENS_PER_IMAGE = 576

/** Routes real Ollama has that this fake does not implement: 501 rather than a misleading 404. */
const UNIMPLEMENTED_ROUTES: Record<string, string> = {
  '/api/pull': 'POST',
  '/api/push': 'POST',
  '/api/create': 'POST',
  '/api/copy': 'POST',
  '/api/delete': 'DELETE',
  '/api/embed': 'POST',
  '/api/embeddings': 'POST',
  '/v1/chat/completions': 'POST',
  '/v1/completions': 'POST',
  '/v1/embeddings': 'POST',
  '/v1/models': 'GET',
}

export async function startFakeOllama(options: Partial<Behaviour> = {}): Promise<FakeOllama> {
  const startBehaviour: Behaviour = { ...DEFAULT_BEHAVIOUR, ...options }
  let behaviour: Behaviour = { ...startBehaviour }
  const requests: RecordedRequest[] = []
  const openExchanges = new Set<Exchange>()
  // Resolvers of requests parked by `hang`/`stallAfterChunks`; release() calls them.
  const parked = new Set<(failure?: HeldFailure) => void>()
  // Models that answered recently, for /api/ps: canonical name -> display name.
  const loadedModels = new Map<string, string>()
  let inFlightCount = 0
  let abortedCount = 0
  let streamedBytes = 0
  let callCount = 0
  let stopping = false

  /** One request/response pair, from arrival until its answer is fully sent or the client leaves. */
  class Exchange {
    finished = false
    /** Aborted when the client goes away or the server stops: every wait listens to it. */
    readonly cancellation = new AbortController()

    constructor(request: Request) {
      inFlightCount++
      openExchanges.add(this)
      request.signal.addEventListener('abort', () => this.clientGone(), { once: true })
    }

    get cancelled(): boolean {
      return this.cancellation.signal.aborted
    }

    finish(): void {
      if (this.finished) return
      this.finished = true
      inFlightCount--
      openExchanges.delete(this)
    }

    clientGone(): void {
      if (!this.finished && !stopping) abortedCount++
      this.finish()
      this.cancellation.abort()
    }

    /** Waits ms, or less if the exchange is cancelled. */
    sleep(ms: number): Promise<void> {
      if (ms <= 0 || this.cancelled) return Promise.resolve()
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms)
        const signal = this.cancellation.signal
        signal.addEventListener('abort', done, { once: true })
        function done(): void {
          clearTimeout(timer)
          signal.removeEventListener('abort', done)
          resolve()
        }
      })
    }

    /** Waits until release() (with the failure it was given, if any) or cancellation. */
    park(): Promise<HeldFailure | undefined> {
      if (this.cancelled) return Promise.resolve(undefined)
      return new Promise((resolve) => {
        const signal = this.cancellation.signal
        const done = (failure?: HeldFailure): void => {
          parked.delete(done)
          signal.removeEventListener('abort', onAbort)
          resolve(failure)
        }
        const onAbort = (): void => done()
        parked.add(done)
        signal.addEventListener('abort', onAbort, { once: true })
      })
    }
  }

  // Streaming responses finish their exchange when the last line is sent; all others when returned.
  const streamedResponses = new WeakSet<Response>()

  async function handle(request: Request, exchange: Exchange): Promise<Response> {
    const receivedAt = Date.now()
    const url = new URL(request.url)
    const path = url.pathname
    const method = request.method
    const rawBody = method === 'GET' || method === 'HEAD' ? '' : await request.text()
    const parsed = parseJsonBody(rawBody)
    const recorded: RecordedRequest = {
      method,
      path,
      headers: Object.fromEntries(request.headers),
      body: parsed.ok ? parsed.value : null,
      rawBody,
      images: [],
      receivedAt,
    }
    requests.push(recorded)
    const current = behaviour // snapshot: later behave() calls do not change this request

    const route = (allowed: string[], handler: () => Response | Promise<Response>): Response | Promise<Response> =>
      allowed.includes(method) ? handler() : methodNotAllowed()

    switch (path) {
      case '/':
        return route(['GET', 'HEAD'], () => textResponse(200, 'Ollama is running'))
      case '/api/version':
        return route(['GET', 'HEAD'], () => metadata(path, { version: current.version }, current, exchange))
      case '/api/tags':
        return route(['GET', 'HEAD'], () => metadata(path, { models: current.models.map(listEntry) }, current, exchange))
      case '/api/ps':
        return route(['GET'], () => jsonResponse(200, { models: [...loadedModels.values()].map(runningEntry) }))
      case '/api/show':
        return route(['POST'], () => (parsed.ok ? show(parsed.value, current, exchange) : errorResponse(400, parsed.error)))
      case '/api/chat':
      case '/api/generate': {
        const endpoint = path === '/api/chat' ? 'chat' : 'generate'
        return route(['POST'], () => (parsed.ok ? inference(endpoint, parsed.value, recorded, current, exchange) : errorResponse(400, parsed.error)))
      }
    }
    const unimplementedMethod = UNIMPLEMENTED_ROUTES[path]
    if (unimplementedMethod !== undefined) {
      return method === unimplementedMethod ? errorResponse(501, `${method} ${path} is not implemented by the fake Ollama server`) : methodNotAllowed()
    }
    return textResponse(404, '404 page not found')
  }

  function show(body: unknown, current: Behaviour, exchange: Exchange): Response | Promise<Response> {
    if (!isRecord(body)) return errorResponse(400, cannotUnmarshal(body, 'api.ShowRequest'))
    // Ollama accepts the legacy `name` when `model` is empty.
    const requested = typeof body.model === 'string' && body.model !== '' ? body.model : body.name
    if (typeof requested !== 'string' || requested === '') return errorResponse(400, 'model is required')
    const installed = findModel(current.models, requested)
    if (installed === undefined) return errorResponse(404, `model '${requested}' not found`)
    return metadata('/api/show', showEntry(installed, current.capabilities), current, exchange)
  }

  /** A metadata route's JSON; padded to `hugeMetadata.bytes` when that names this route. */
  function metadata(path: string, value: Record<string, unknown>, current: Behaviour, exchange: Exchange): Response | Promise<Response> {
    const huge = current.hugeMetadata
    if (huge?.route !== path) return jsonResponse(200, value)
    const json = JSON.stringify(value)
    return streamLines(exchange, hugeJson(`${json.slice(0, -1)},"padding":"`, huge.bytes, '"}'), JSON_CONTENT_TYPE)
  }

  async function inference(endpoint: 'chat' | 'generate', body: unknown, recorded: RecordedRequest, current: Behaviour, exchange: Exchange): Promise<Response> {
    const validated = endpoint === 'chat' ? validateChat(body) : validateGenerate(body)
    if (!validated.ok) return errorResponse(validated.status, validated.error)
    const { request, images } = validated
    recorded.images = images

    const installed = findModel(current.models, request.model)
    if (installed === undefined) {
      return errorResponse(404, `model ${goQuote(request.model)} not found, try pulling it first`)
    }
    const thinkRequested = request.think === true || (typeof request.think === 'string' && request.think !== '')
    if (thinkRequested && !current.capabilities.includes('thinking')) {
      return errorResponse(400, `${goQuote(request.model)} does not support thinking`)
    }
    // A thinking model thinks unless told `think: false` (the default of thinking models in Ollama).
    const thinks = current.capabilities.includes('thinking') && request.think !== false
    const format = request.format ?? ''
    if (isRecord(format) && current.formatSupport === 'refuse') {
      return errorResponse(
        400,
        `json: cannot unmarshal object into Go struct field ${endpoint === 'chat' ? 'ChatRequest' : 'GenerateRequest'}.format of type string`,
      )
    }
    if (!isRecord(format) && format !== '' && format !== 'json') return errorResponse(400, `invalid format: ${JSON.stringify(format)}`)
    const structuredFormat = format !== '' && current.formatSupport !== 'ignore' ? format : null

    const stream = request.stream !== false // Ollama streams unless told not to
    const canonical = canonicalModelName(installed) ?? installed
    // Generate bodies have no messages; chat bodies have no prompt.
    const messages = endpoint === 'chat' ? ((request as ChatRequestBody).messages ?? []) : []
    const prompt = endpoint === 'chat' ? lastUserContent(messages) : ((request as GenerateRequestBody).prompt ?? '')
    const isEmpty = endpoint === 'chat' ? messages.length === 0 : prompt === ''
    if (isEmpty) {
      // An empty chat/generate only loads (or with keep_alive 0 unloads) the model; always one JSON object.
      const unload = isZeroKeepAlive(request.keep_alive)
      if (unload) loadedModels.delete(canonical)
      else loadedModels.set(canonical, displayName(installed))
      return jsonResponse(200, {
        model: request.model,
        created_at: new Date().toISOString(),
        ...(endpoint === 'chat' ? { message: { role: 'assistant', content: '' } } : { response: '' }),
        done: true,
        done_reason: unload ? 'unload' : 'load',
      })
    }

    callCount++
    const replyContext: ReplyContext = {
      endpoint,
      model: request.model,
      prompt,
      messages,
      images,
      options: request.options ?? {},
      callNumber: callCount,
      body: request,
    }
    const startedAt = performance.now()

    if (current.hang || (!stream && current.stallAfterChunks !== null) || current.stallAfterChunks === 0) {
      const failure = await exchange.park()
      if (exchange.cancelled) return cancelledResponse()
      if (failure && current.hang) return errorResponse(failure.status, failure.message ?? current.failError)
    }
    const answersWithoutStreaming =
      !stream || current.failStatus !== null || current.malformed !== false || (current.failAfterChunks !== null && current.failAfterChunks <= 0)
    if (answersWithoutStreaming) {
      await exchange.sleep(current.delayMs)
      if (exchange.cancelled) return cancelledResponse()
    }

    if (images.length > 0 && !current.capabilities.includes('vision')) {
      return errorResponse(500, 'this model is missing data required for image input')
    }
    if (current.rejectUndecodableImages && images.some((image) => image.format === 'unknown')) {
      return errorResponse(500, 'failed to process inputs: image: unknown format')
    }
    if (current.failStatus !== null) return errorResponse(current.failStatus, current.failError)
    if (current.failAfterChunks !== null && (!stream || current.failAfterChunks <= 0)) {
      return errorResponse(500, current.failError) // nothing written yet: Ollama sends the error as a status
    }
    if (current.malformed !== false) return malformedResponse(current.malformed, stream, request.model)
    const huge = current.hugeReply
    const head = { model: request.model, created_at: new Date().toISOString() }
    if (huge?.streamed) {
      return streamLines(
        exchange,
        hugeLines(huge.bytes, (content) => `${JSON.stringify({ ...head, ...answerOf(endpoint, content), done: false })}\n`, huge.head, huge.unit),
      )
    }
    if (huge) {
      // The JSON object of `answerOf(endpoint, "AAAA…")`, written around the content as it goes out.
      const [prefix, suffix] = JSON.stringify({ ...head, ...answerOf(endpoint, '\u0000'), done: true, done_reason: 'length' }).split('\\u0000')
      const inJson = (text: string) => JSON.stringify(text).slice(1, -1)
      const unit = huge.unit === undefined ? undefined : inJson(huge.unit)
      return streamLines(exchange, hugeJson(`${prefix ?? ''}${inJson(huge.head ?? '')}`, huge.bytes, suffix ?? '', unit), JSON_CONTENT_TYPE)
    }

    const judged = judgedDecorative(current, replyContext)
    const image = replyContext.images[0]
    const complex = !judged && current.complex !== null && image !== undefined && current.complex(image)
    const longAsked = /LONG DESCRIPTION:/u.test(`${allMessageText(messages)} ${prompt} ${(request as GenerateRequestBody).system ?? ''}`)
    const chosen = typeof current.reply === 'function' ? current.reply(replyContext) : current.reply
    const plainText = current.junk === null ? chosen : junkReply(current.junk, prompt)
    const replyText = current.emptyReply
      ? ''
      : structuredFormat !== null
        ? structuredContent(structuredFormat, {
            decorative: judged,
            decorative_reason: judged ? current.decorativeReason : null,
            alt_text: judged ? '' : plainText,
            text_in_image: null,
            long_description: complex ? current.longDescription : null,
            ...(typeof current.structured === 'function' ? current.structured(replyContext) : current.structured),
          })
        : judged
          ? `DECORATIVE: ${current.decorativeReason}`
          : complex && longAsked
            ? `${plainText}\nLONG DESCRIPTION: ${current.longDescription}`
            : plainText
    const thinking = thinks ? current.thinking : null
    const answerText = thinks && current.thinkingOnly ? '' : replyText
    let tokens = splitIntoTokens(answerText)
    let doneReason = 'stop'
    const numPredict = request.options?.num_predict
    if (typeof numPredict === 'number' && numPredict > 0 && tokens.length > numPredict) {
      tokens = tokens.slice(0, numPredict)
      doneReason = 'length'
    }
    loadedModels.set(canonical, displayName(installed))

    const promptTokens = countWords(endpoint === 'chat' ? allMessageText(messages) : prompt) + images.length * PROMPT_TOKENS_PER_IMAGE
    // As Ollama separates it: `message.thinking` (chat) or `thinking` (generate) beside the content.
    const answer = (content: string, thought: string | null) =>
      endpoint === 'chat'
        ? { message: { role: 'assistant', content, ...(thought !== null && { thinking: thought }) } }
        : { response: content, ...(thought !== null && { thinking: thought }) }
    const chunkLine = (content: string, thought: string | null = null): string =>
      `${JSON.stringify({
        model: request.model,
        created_at: new Date().toISOString(),
        ...answer(content, thought),
        done: false,
      })}\n`
    const finalObject = (content: string, thought: string | null = null): Record<string, unknown> => ({
      model: request.model,
      created_at: new Date().toISOString(),
      ...answer(content, thought),
      done: true,
      done_reason: doneReason,
      ...(endpoint === 'generate' && request.raw !== true ? { context: fakeContext(promptTokens + tokens.length) } : {}),
      ...timings(startedAt, promptTokens, tokens.length),
    })

    if (!stream) return jsonResponse(200, finalObject(tokens.join(''), thinking))

    // Streaming: one line per token, then the final line with the counters.
    const lineCount = tokens.length + 1
    const interval = current.delayMs / lineCount
    const lines = async function* (): AsyncGenerator<string> {
      if (thinking !== null) yield chunkLine('', thinking)
      for (const [index, token] of tokens.entries()) {
        if (current.failAfterChunks !== null && index === current.failAfterChunks) {
          yield `${JSON.stringify({ error: current.failError })}\n`
          return
        }
        if (current.stallAfterChunks !== null && index === current.stallAfterChunks) {
          await exchange.park()
          if (exchange.cancelled) return
        }
        await exchange.sleep(interval)
        if (exchange.cancelled) return
        yield chunkLine(token)
      }
      if (current.failAfterChunks !== null && current.failAfterChunks >= tokens.length) {
        yield `${JSON.stringify({ error: current.failError })}\n`
        return
      }
      await exchange.sleep(interval)
      if (exchange.cancelled) return
      yield `${JSON.stringify(finalObject(''))}\n`
    }
    return streamLines(exchange, lines())
  }

  /** Like Ollama (gin's c.Stream), headers go out with the first line, not before it. */
  async function streamLines(exchange: Exchange, lines: AsyncGenerator<string>, contentType = NDJSON_CONTENT_TYPE): Promise<Response> {
    const encoder = new TextEncoder()
    const encode = (line: string) => {
      const bytes = encoder.encode(line)
      streamedBytes += bytes.byteLength
      return bytes
    }
    const first = await lines.next()
    if (exchange.cancelled) return cancelledResponse()
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (first.done) {
          exchange.finish()
          controller.close()
        } else {
          controller.enqueue(encode(first.value))
        }
      },
      async pull(controller) {
        if (exchange.finished) return
        const next = await lines.next()
        if (exchange.cancelled) return // the client is gone; the stream is already cancelled
        if (next.done) {
          exchange.finish()
          controller.close()
        } else {
          controller.enqueue(encode(next.value))
        }
      },
      cancel() {
        exchange.clientGone()
      },
    })
    const response = new Response(body, { status: 200, headers: { 'content-type': contentType } })
    streamedResponses.add(response)
    return response
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    // Bun closes connections idle for 10 s by default; Ollama waits as long as the model takes.
    idleTimeout: 0,
    async fetch(request) {
      const exchange = new Exchange(request)
      try {
        const response = await handle(request, exchange)
        if (!streamedResponses.has(response)) exchange.finish()
        return response
      } catch (error) {
        exchange.finish()
        return errorResponse(500, `fake ollama: ${error instanceof Error ? error.message : String(error)}`)
      }
    },
  })

  const port = server.port
  if (port === undefined) throw new Error('fake ollama: Bun.serve did not report a port')
  let stopped: Promise<void> | undefined

  const fake: FakeOllama = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    chatRequests: () => objectBodies(requests, '/api/chat') as ChatRequestBody[],
    generateRequests: () => objectBodies(requests, '/api/generate') as GenerateRequestBody[],
    behave(changes) {
      behaviour = { ...behaviour, ...changes }
    },
    reset() {
      requests.length = 0
      behaviour = { ...startBehaviour }
      abortedCount = 0
      streamedBytes = 0
      callCount = 0
      loadedModels.clear()
      fake.release()
    },
    release(failure) {
      for (const resume of [...parked]) resume(failure)
    },
    inFlight: () => inFlightCount,
    aborted: () => abortedCount,
    bytesStreamed: () => streamedBytes,
    waitFor(predicate, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const deadline = performance.now() + timeoutMs
        const check = (): void => {
          let satisfied: boolean
          try {
            satisfied = predicate()
          } catch (error) {
            reject(error)
            return
          }
          if (satisfied) resolve()
          else if (performance.now() >= deadline) reject(new Error(`fake ollama: waitFor timed out after ${timeoutMs} ms`))
          else setTimeout(check, 5)
        }
        check()
      })
    },
    stop() {
      stopped ??= (async () => {
        stopping = true
        for (const exchange of [...openExchanges]) {
          exchange.finish()
          exchange.cancellation.abort()
        }
        await server.stop(true)
      })()
      return stopped
    },
  }
  return fake
}

// ---------------------------------------------------------------------------
// Request parsing and validation, with Go's (encoding/json, gin) error texts.

type ParsedBody = { ok: true; value: unknown } | { ok: false; error: string }

function parseJsonBody(raw: string): ParsedBody {
  if (raw.trim() === '') return { ok: false, error: 'missing request body' }
  try {
    return { ok: true, value: JSON.parse(raw) }
  } catch {
    const first = raw.trimStart()[0] ?? ''
    const error = /^[{["tfn\-0-9]$/.test(first) ? 'unexpected EOF' : `invalid character '${first}' looking for beginning of value`
    return { ok: false, error }
  }
}

type Validated<T> = { ok: true; request: T; images: RecordedImage[] } | { ok: false; status: number; error: string }

function validateChat(body: unknown): Validated<ChatRequestBody> {
  if (!isRecord(body)) return invalid(cannotUnmarshal(body, 'api.ChatRequest'))
  const fieldError =
    checkField(body, 'model', 'string', 'ChatRequest.model') ??
    checkField(body, 'messages', 'array', 'ChatRequest.messages') ??
    checkField(body, 'stream', 'boolean', 'ChatRequest.stream') ??
    checkField(body, 'options', 'object', 'ChatRequest.options')
  if (fieldError !== undefined) return invalid(fieldError)
  const images: RecordedImage[] = []
  const messages = Array.isArray(body.messages) ? body.messages : []
  for (const message of messages) {
    if (!isRecord(message)) return invalid(cannotUnmarshal(message, 'api.Message'))
    const messageError =
      checkField(message, 'role', 'string', 'ChatRequest.messages.role') ??
      checkField(message, 'content', 'string', 'ChatRequest.messages.content') ??
      checkField(message, 'images', 'array', 'ChatRequest.messages.images')
    if (messageError !== undefined) return invalid(messageError)
    const decoded = decodeImages(message.images, 'ChatRequest.messages.images')
    if (!decoded.ok) return invalid(decoded.error)
    images.push(...decoded.images)
  }
  if (typeof body.model !== 'string' || body.model === '') return invalid('model is required')
  return { ok: true, request: body as ChatRequestBody, images }
}

function validateGenerate(body: unknown): Validated<GenerateRequestBody> {
  if (!isRecord(body)) return invalid(cannotUnmarshal(body, 'api.GenerateRequest'))
  const fieldError =
    checkField(body, 'model', 'string', 'GenerateRequest.model') ??
    checkField(body, 'prompt', 'string', 'GenerateRequest.prompt') ??
    checkField(body, 'images', 'array', 'GenerateRequest.images') ??
    checkField(body, 'stream', 'boolean', 'GenerateRequest.stream') ??
    checkField(body, 'options', 'object', 'GenerateRequest.options')
  if (fieldError !== undefined) return invalid(fieldError)
  const decoded = decodeImages(body.images, 'GenerateRequest.images')
  if (!decoded.ok) return invalid(decoded.error)
  if (typeof body.model !== 'string' || body.model === '') return invalid('model is required')
  return { ok: true, request: body as GenerateRequestBody, images: decoded.images }
}

function invalid(error: string): { ok: false; status: number; error: string } {
  return { ok: false, status: 400, error }
}

type JsonKind = 'string' | 'number' | 'boolean' | 'array' | 'object' | 'null'

function jsonKind(value: unknown): JsonKind {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  const kind = typeof value
  return kind === 'string' || kind === 'number' || kind === 'boolean' ? kind : 'object'
}

/** Go's name for a JSON value's type in unmarshal errors. */
function goKind(value: unknown): string {
  const kind = jsonKind(value)
  return kind === 'boolean' ? 'bool' : kind
}

function cannotUnmarshal(value: unknown, goType: string): string {
  return `json: cannot unmarshal ${goKind(value)} into Go value of type ${goType}`
}

/** Go leaves a field at its zero value for null/absent, and rejects a value of another type. */
function checkField(record: Record<string, unknown>, field: string, expected: Exclude<JsonKind, 'null'>, goField: string): string | undefined {
  const value = record[field]
  if (value === undefined || value === null || jsonKind(value) === expected) return undefined
  const goType = { string: 'string', number: 'int', boolean: 'bool', array: 'slice', object: 'map' }[expected]
  return `json: cannot unmarshal ${goKind(value)} into Go struct field ${goField} of type ${goType}`
}

type DecodedImages = { ok: true; images: RecordedImage[] } | { ok: false; error: string }

/** Ollama's images are Go []byte, which encoding/json reads as standard, padded base64. */
function decodeImages(value: unknown, goField: string): DecodedImages {
  if (value === undefined || value === null) return { ok: true, images: [] }
  if (!Array.isArray(value)) return { ok: false, error: `json: cannot unmarshal ${goKind(value)} into Go struct field ${goField} of type []api.ImageData` }
  const images: RecordedImage[] = []
  for (const item of value) {
    if (typeof item !== 'string') {
      return { ok: false, error: `json: cannot unmarshal ${goKind(item)} into Go struct field ${goField} of type api.ImageData` }
    }
    const bytes = decodeStandardBase64(item)
    if (typeof bytes === 'number') return { ok: false, error: `illegal base64 data at input byte ${bytes}` }
    images.push({ bytes, ...sniffImage(bytes) })
  }
  return { ok: true, images }
}

/** Decoded bytes, or the offset of the first illegal input byte (Go's CorruptInputError). */
function decodeStandardBase64(text: string): Uint8Array | number {
  const compact = text.replace(/[\r\n]/g, '') // Go's decoder skips line breaks
  const illegal = compact.search(/[^A-Za-z0-9+/=]/)
  if (illegal !== -1) return illegal
  const firstPad = compact.indexOf('=')
  if (firstPad !== -1 && (!/^=={0,1}$/.test(compact.slice(firstPad)) || compact.length % 4 !== 0)) return firstPad
  if (compact.length % 4 !== 0) return compact.length - (compact.length % 4)
  return new Uint8Array(Buffer.from(compact, 'base64'))
}

// ---------------------------------------------------------------------------
// Image sniffing: format and dimensions from the header bytes alone.

/** Format and dimensions read from the image's header; 'unknown' with nulls if it is not PNG/JPEG/GIF/WebP. */
export function sniffImage(bytes: Uint8Array): { format: ImageFormat; width: number | null; height: number | null } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const ascii = (start: number, length: number): string => String.fromCharCode(...bytes.subarray(start, start + length))
  const has = (length: number): boolean => bytes.length >= length

  if (has(24) && view.getUint32(0) === 0x89504e47 && view.getUint32(4) === 0x0d0a1a0a && ascii(12, 4) === 'IHDR') {
    return { format: 'png', width: view.getUint32(16), height: view.getUint32(20) }
  }
  if (has(10) && (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a')) {
    return { format: 'gif', width: view.getUint16(6, true), height: view.getUint16(8, true) }
  }
  if (has(3) && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return { format: 'jpeg', ...jpegDimensions(bytes, view) }
  }
  if (has(16) && ascii(0, 4) === 'RIFF' && ascii(8, 4) === 'WEBP') {
    return { format: 'webp', ...webpDimensions(bytes, view, ascii(12, 4)) }
  }
  return { format: 'unknown', width: null, height: null }
}

function jpegDimensions(bytes: Uint8Array, view: DataView): { width: number | null; height: number | null } {
  let offset = 2
  while (offset + 9 <= bytes.length) {
    if (bytes[offset] !== 0xff) return { width: null, height: null }
    const marker = bytes[offset + 1] ?? 0
    if (marker === 0xff) {
      offset++ // fill byte
      continue
    }
    // SOF0..SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) are not frames.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: view.getUint16(offset + 5), width: view.getUint16(offset + 7) }
    }
    offset += 2 + view.getUint16(offset + 2)
  }
  return { width: null, height: null }
}

function webpDimensions(bytes: Uint8Array, view: DataView, chunk: string): { width: number | null; height: number | null } {
  const byte = (index: number): number => bytes[index] ?? 0
  if (chunk === 'VP8 ' && bytes.length >= 30) {
    return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff }
  }
  if (chunk === 'VP8L' && bytes.length >= 25) {
    const bits = view.getUint32(21, true)
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
  }
  if (chunk === 'VP8X' && bytes.length >= 30) {
    return {
      width: (byte(24) | (byte(25) << 8) | (byte(26) << 16)) + 1,
      height: (byte(27) | (byte(28) << 8) | (byte(29) << 16)) + 1,
    }
  }
  return { width: null, height: null }
}

// ---------------------------------------------------------------------------
// Model names: Ollama's host/namespace/model:tag with defaults, compared case-insensitively.

const DEFAULT_REGISTRY = 'registry.ollama.ai'
const DEFAULT_NAMESPACE = 'library'

type ModelName = { host: string; namespace: string; model: string; tag: string }

function parseModelName(raw: string): ModelName | undefined {
  const withoutDigest = raw.trim().split('@')[0] ?? ''
  const parts = withoutDigest.split('/')
  if (parts.length > 3 || parts.some((part) => part === '')) return undefined
  const last = parts.pop() ?? ''
  const colon = last.lastIndexOf(':')
  const model = colon === -1 ? last : last.slice(0, colon)
  const tag = colon === -1 ? 'latest' : last.slice(colon + 1)
  if (model === '' || tag === '') return undefined
  const [host, namespace] = parts.length === 2 ? [parts[0] ?? '', parts[1] ?? ''] : [DEFAULT_REGISTRY, parts[0] ?? DEFAULT_NAMESPACE]
  return { host, namespace, model, tag }
}

function canonicalModelName(raw: string): string | undefined {
  const name = parseModelName(raw)
  return name && `${name.host}/${name.namespace}/${name.model}:${name.tag}`.toLowerCase()
}

/** The shortest unambiguous form, as /api/tags shows it: "llava" -> "llava:latest". */
function displayName(raw: string): string {
  const name = parseModelName(raw)
  if (name === undefined) return raw
  if (name.host !== DEFAULT_REGISTRY) return `${name.host}/${name.namespace}/${name.model}:${name.tag}`
  if (name.namespace !== DEFAULT_NAMESPACE) return `${name.namespace}/${name.model}:${name.tag}`
  return `${name.model}:${name.tag}`
}

function findModel(installed: string[], requested: string): string | undefined {
  const wanted = canonicalModelName(requested)
  return wanted === undefined ? undefined : installed.find((name) => canonicalModelName(name) === wanted)
}

// ---------------------------------------------------------------------------
// Response bodies.

const MODIFIED_AT = '2025-09-18T10:21:43.123456789Z'

function fakeDigest(name: string): string {
  return new Bun.CryptoHasher('sha256').update(canonicalModelName(name) ?? name).digest('hex')
}

function modelDetails(): Record<string, unknown> {
  return {
    parent_model: '',
    format: 'gguf',
    family: 'llama',
    families: ['llama', 'clip'],
    parameter_size: '7B',
    quantization_level: 'Q4_0',
  }
}

function listEntry(name: string): Record<string, unknown> {
  const shown = displayName(name)
  return {
    name: shown,
    model: shown,
    modified_at: MODIFIED_AT,
    size: 4_733_363_377,
    digest: fakeDigest(name),
    details: modelDetails(),
  }
}

function runningEntry(name: string): Record<string, unknown> {
  return {
    name,
    model: name,
    size: 5_836_423_168,
    digest: fakeDigest(name),
    details: modelDetails(),
    expires_at: new Date(Date.now() + 5 * 60_000).toISOString(),
    size_vram: 0,
    context_length: 4096,
  }
}

function showEntry(name: string, capabilities: string[]): Record<string, unknown> {
  const shown = displayName(name)
  const template = '[INST] {{ if .System }}{{ .System }} {{ end }}{{ .Prompt }} [/INST]'
  const parameters = 'stop                           "[INST]"\nstop                           "[/INST]"'
  return {
    license: 'Apache License\nVersion 2.0, January 2004',
    modelfile:
      '# Modelfile generated by "ollama show"\n# To build a new Modelfile based on this, replace FROM with:\n' +
      `# FROM ${shown}\n\nFROM /root/.ollama/models/blobs/sha256-${fakeDigest(name)}\n` +
      `TEMPLATE """${template}"""\nPARAMETER stop [INST]\nPARAMETER stop [/INST]\n`,
    parameters,
    template,
    details: modelDetails(),
    model_info: {
      'general.architecture': 'llama',
      'general.file_type': 2,
      'general.parameter_count': 7_241_732_096,
      'llama.context_length': 32_768,
      'llama.embedding_length': 4096,
    },
    projector_info: {
      'general.architecture': 'clip',
      'clip.has_vision_encoder': true,
      'clip.vision.image_size': 336,
    },
    capabilities,
    modified_at: MODIFIED_AT,
  }
}

function malformedResponse(kind: true | MalformedKind, stream: boolean, model: string): Response {
  const chosen = kind === true ? 'truncated-json' : kind
  const contentType = stream ? NDJSON_CONTENT_TYPE : JSON_CONTENT_TYPE
  switch (chosen) {
    case 'truncated-json':
      return new Response(`{"model":"${model}","created_at":"2025-09-18T10:21:43Z","message":{"role":"assistant","content":"A red`, {
        status: 200,
        headers: { 'content-type': contentType },
      })
    case 'html':
      return new Response('<!DOCTYPE html><html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>\n', {
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8' },
      })
    case 'wrong-shape':
      return new Response(`${JSON.stringify({ status: 'ok', result: 'A red square.' })}\n`, {
        status: 200,
        headers: { 'content-type': contentType },
      })
    case 'bad-stream-line': {
      const line = (content: string, done: boolean) => `${JSON.stringify({ model, created_at: MODIFIED_AT, message: { role: 'assistant', content }, done })}\n`
      return new Response(`${line('A red', false)}{"model":"${model}","message":{"role":"assi\n${line('', true)}`, {
        status: 200,
        headers: { 'content-type': NDJSON_CONTENT_TYPE },
      })
    }
    case 'cut-off': {
      const start = new TextEncoder().encode(`{"model":"${model}","created_at":"${MODIFIED_AT}","message":{"role":"assistant","content":"A red`)
      // A body stream that fails after its first chunk: the server drops the connection before the body ends.
      let sent = false
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent) return controller.error(new DOMException('fake ollama: connection dropped mid-body', 'AbortError'))
          sent = true
          controller.enqueue(start)
        },
      })
      return new Response(body, { status: 200, headers: { 'content-type': contentType } })
    }
  }
}

/** What `junk` answers: "AAAA…", the prompt as it came, or a URL alone. */
export function junkReply(kind: JunkKind, prompt: string): string {
  if (kind === 'repeated-char') return 'A'.repeat(400)
  if (kind === 'prompt-echo') return prompt
  return 'https://images.example.com/uploads/2024/05/kite-beach-1234.jpg'
}

/** The answer part of a chat (`message`) or generate (`response`) object. */
function answerOf(endpoint: 'chat' | 'generate', content: string): Record<string, unknown> {
  return endpoint === 'chat' ? { message: { role: 'assistant', content } } : { response: content }
}

const HUGE_CHUNK = 'A'.repeat(64 * 1024)

/** About 64 KiB of `unit` repeated ("A" without one). */
const hugeChunk = (unit?: string) => (unit === undefined ? HUGE_CHUNK : unit.repeat(Math.ceil(HUGE_CHUNK.length / unit.length)))

/** A JSON text `prefix` + `bytes` × "A" (or `unit` repeated) + `suffix`, in 64 KiB pieces made as they are asked for. */
async function* hugeJson(prefix: string, bytes: number, suffix: string, unit?: string): AsyncGenerator<string> {
  const chunk = hugeChunk(unit)
  yield prefix
  for (let sent = 0; sent < bytes; sent += chunk.length) yield chunk
  yield suffix
}

/** NDJSON chunk lines: `head`, then 64 KiB of "A" (or `unit` repeated) each up to `bytes`, then a done line, made as they are asked for. */
async function* hugeLines(bytes: number, line: (content: string) => string, head?: string, unit?: string): AsyncGenerator<string> {
  const chunk = hugeChunk(unit)
  if (head) yield line(head)
  for (let sent = 0; sent < bytes; sent += chunk.length) yield line(chunk)
  yield `${line('').replace('"done":false', '"done":true')}`
}

/** Integer nanosecond counters shaped like Ollama's, consistent with the elapsed time. */
function timings(startedAt: number, promptTokens: number, evalTokens: number): Record<string, number> {
  const total = Math.max(1_000_000, Math.round((performance.now() - startedAt) * 1e6))
  return {
    total_duration: total,
    load_duration: Math.round(total * 0.1),
    prompt_eval_count: Math.max(1, promptTokens),
    prompt_eval_duration: Math.round(total * 0.3),
    eval_count: Math.max(1, evalTokens), // a real model always produces at least the end token
    eval_duration: Math.round(total * 0.6),
  }
}

function fakeContext(length: number): number[] {
  return Array.from({ length: Math.min(length, 64) }, (_, index) => 1000 + index)
}

function jsonResponse(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), { status, headers: { 'content-type': JSON_CONTENT_TYPE } })
}

function errorResponse(status: number, message: string): Response {
  return jsonResponse(status, { error: message })
}

function textResponse(status: number, text: string): Response {
  return new Response(text, { status, headers: { 'content-type': TEXT_CONTENT_TYPE } })
}

function methodNotAllowed(): Response {
  return textResponse(405, '405 method not allowed')
}

/** For a client that is already gone: nobody reads it. */
function cancelledResponse(): Response {
  return new Response(null, { status: 499 })
}

// ---------------------------------------------------------------------------
// Small helpers.

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function objectBodies(requests: RecordedRequest[], path: string): Record<string, unknown>[] {
  return requests
    .filter((request) => request.method === 'POST' && request.path === path && isRecord(request.body))
    .map((request) => request.body as Record<string, unknown>)
}

/** Tokens of roughly a word each, leading whitespace attached, that concatenate back to the text. */
function splitIntoTokens(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? []
}

function countWords(text: string): number {
  return text.split(/\s+/).filter((word) => word !== '').length
}

function lastUserContent(messages: ChatMessageBody[] | undefined): string {
  const user = (messages ?? []).filter((message) => message.role === 'user').at(-1)
  return typeof user?.content === 'string' ? user.content : ''
}

/** Whether the prompt asks if the image is purely decorative, and the behaviour's rule says its first image is. */
function judgedDecorative(behaviour: Behaviour, context: ReplyContext): boolean {
  const image = context.images[0]
  if (behaviour.decorative === null || image === undefined) return false
  const system = typeof (context.body as GenerateRequestBody).system === 'string' ? (context.body as GenerateRequestBody).system : ''
  const asked = /purely decorative/i.test(`${allMessageText(context.messages)} ${context.prompt} ${system}`)
  return asked && behaviour.decorative(image)
}

function allMessageText(messages: ChatMessageBody[] | undefined): string {
  return (messages ?? []).map((message) => (typeof message.content === 'string' ? message.content : '')).join(' ')
}

function isZeroKeepAlive(keepAlive: unknown): boolean {
  if (typeof keepAlive === 'number') return keepAlive === 0
  return typeof keepAlive === 'string' && /^0+(\.0+)?(ns|us|µs|ms|s|m|h)?$/.test(keepAlive.trim())
}

/** Go's %q for plain strings. */
function goQuote(text: string): string {
  return JSON.stringify(text)
}
