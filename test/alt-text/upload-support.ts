// What the upload tests share: requests with an image in the body (base64 JSON, multipart), and a raw
// socket that keeps sending a body until the server answers, to show an answer came before the end.
import type { AltTextEnv } from '../support/alt-text-env'
import type { ApiResponse } from '../support/service'

export const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

export const dataUrl = (bytes: Uint8Array, type = 'image/png') => `data:${type};base64,${base64(bytes)}`

async function answer(res: Response): Promise<ApiResponse> {
  const text = await res.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: res.status, body, headers: res.headers, text }
}

/** POST /api/alt-text with a raw body and content type (default: JSON). */
export async function postRaw(env: AltTextEnv, body: string | Uint8Array, contentType = 'application/json', key = env.key): Promise<ApiResponse> {
  return answer(
    await fetch(`${env.service.url}/api/alt-text`, {
      method: 'POST',
      headers: { 'content-type': contentType, 'x-api-key': key },
      body: body as string | Uint8Array<ArrayBuffer>,
    }),
  )
}

export type FormValue = string | string[] | { bytes: Uint8Array; filename?: string; type?: string }

/** POST /api/alt-text as multipart/form-data: a `{bytes}` value is a file part, a list repeats the field. */
export async function postForm(env: AltTextEnv, fields: Record<string, FormValue>, key = env.key): Promise<ApiResponse> {
  const form = new FormData()
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') form.append(name, value)
    else if (Array.isArray(value)) for (const item of value) form.append(name, item)
    else form.append(name, new Blob([value.bytes as Uint8Array<ArrayBuffer>], { type: value.type ?? 'application/octet-stream' }), value.filename ?? 'image')
  }
  return answer(await fetch(`${env.service.url}/api/alt-text`, { method: 'POST', headers: { 'x-api-key': key }, body: form }))
}

export type StreamedAnswer = {
  /** The status line's code; 0 when the server closed without answering. */
  status: number
  /** The raw answer, head and what arrived of the body. */
  text: string
  /** Body bytes written to the socket when the answer (or the close) came. */
  sentBeforeAnswer: number
  /** Whether every byte of `total` was written. */
  finished: boolean
}

/**
 * Sends `head` (request line and headers, ending in a blank line) and then `total` body bytes made by
 * `piece(offset)`, as fast as the socket takes them, until the server answers or closes. Loopback only.
 */
export async function streamUntilAnswered(url: string, head: string, total: number, piece: (offset: number) => Uint8Array): Promise<StreamedAnswer> {
  const { hostname, port } = new URL(url)
  if (hostname !== '127.0.0.1') throw new Error(`loopback only, not ${hostname}`)
  let text = ''
  let sent = 0
  let answered = false
  let drained: (() => void) | null = null
  const { promise: done, resolve } = Promise.withResolvers<void>()
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_socket, data) {
        text += Buffer.from(data).toString('latin1')
        if (text.includes('\r\n\r\n')) {
          answered = true
          resolve()
          drained?.()
        }
      },
      drain() {
        drained?.()
      },
      close() {
        answered = true
        resolve()
        drained?.()
      },
      error() {
        answered = true
        resolve()
        drained?.()
      },
    },
  })
  socket.write(head)
  while (!answered && sent < total) {
    const chunk = piece(sent).subarray(0, total - sent)
    let offset = 0
    while (offset < chunk.length && !answered) {
      const part = chunk.subarray(offset)
      const written = Math.max(0, socket.write(part))
      offset += written
      sent += written
      // The socket's buffer is full: wait for room, or for the answer.
      if (written < part.length) await new Promise<void>((wake) => (drained = wake))
      drained = null
    }
  }
  const sentBeforeAnswer = sent
  // Bounded: a server that never answers fails the test's assertions instead of hanging it.
  const timer = setTimeout(resolve, 10_000)
  await done
  clearTimeout(timer)
  socket.end()
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0)
  return { status, text, sentBeforeAnswer, finished: sent >= total }
}

/** One chunk of HTTP/1.1 chunked transfer coding. */
export const chunked = (bytes: Uint8Array) => Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')])
