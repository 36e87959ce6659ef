// Sends exact bytes over TCP, for requests a fetch client will not make (no Host, a malformed Host, HTTP/1.0).
export type RawResponse = { status: number; headers: Record<string, string>; body: string }

export async function rawRequest(url: string, requestText: string): Promise<RawResponse> {
  const { hostname, port } = new URL(url)
  const chunks: Uint8Array[] = []
  const { promise: closed, resolve } = Promise.withResolvers<void>()
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data: (_socket, data) => {
        chunks.push(new Uint8Array(data))
      },
      close: () => resolve(),
      error: () => resolve(),
    },
  })
  socket.write(requestText)
  socket.flush()
  await closed
  const text = Buffer.concat(chunks).toString('utf8')
  const [head = '', ...rest] = text.split('\r\n\r\n')
  const [statusLine = '', ...headerLines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, body: rest.join('\r\n\r\n') }
}

/** A request line, the given headers and a body, closing the connection after the answer. */
export function httpRequest(method: string, path: string, headers: string[], body = '', version = 'HTTP/1.1'): string {
  const lines = [`${method} ${path} ${version}`, ...headers, 'Connection: close']
  if (body !== '') lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`)
  return `${lines.join('\r\n')}\r\n\r\n${body}`
}
