// A fetch for the model clients that reads each response body up to a byte cap. The official clients
// read whole bodies (response.json(), response.text()) or whole stream lines, so a host sending 200 MB
// would be held in memory and parsed; here the body stream is counted as it arrives, and once past the
// cap the connection is closed and reading fails with AnswerTooLargeError.

export type FetchFn = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** A model server's response body passed its byte cap; nothing more of it was read. */
export class AnswerTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the model server's answer is over the limit of ${limitBytes} bytes; reading stopped there`)
    this.name = 'AnswerTooLargeError'
  }
}

/** Whether `error`, or one it wraps (the clients wrap what fetch and body reads throw), is an AnswerTooLargeError. */
export function tooLarge(error: unknown): AnswerTooLargeError | null {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) if (e instanceof AnswerTooLargeError) return e
  return null
}

/** `base` with every response body cut at `maxBytes`. A declared Content-Length over it fails before any byte is read. */
export function cappedFetch(base: FetchFn, maxBytes: number): FetchFn {
  return async (input, init) => {
    const response = await base(input, init)
    const source = response.body
    if (source === null) return response
    const declared = Number(response.headers.get('content-length') ?? Number.NaN)
    const overDeclared = declared > maxBytes
    const reader = overDeclared ? null : source.getReader()
    if (overDeclared) void source.cancel().catch(() => {})
    let count = 0
    const body = new ReadableStream<Uint8Array>(
      {
        start(controller) {
          if (overDeclared) controller.error(new AnswerTooLargeError(maxBytes))
        },
        async pull(controller) {
          if (!reader) return
          const { done, value } = await reader.read()
          if (done) return controller.close()
          count += value.byteLength
          if (count > maxBytes) {
            // Cancelling the source closes the connection: the rest is never received.
            void reader.cancel().catch(() => {})
            return controller.error(new AnswerTooLargeError(maxBytes))
          }
          controller.enqueue(value)
        },
        cancel(reason) {
          return reader?.cancel(reason)
        },
      },
      // Nothing read ahead: a chunk is pulled from the connection only when the client asks for one.
      { highWaterMark: 0 },
    )
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
  }
}
