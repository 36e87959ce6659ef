// What the Action's tests share: a release server on loopback (SHA256SUMS and one binary under
// /releases/download/v<version>/), and INPUT_* variables as a runner sets them from `with:`.
import { createHash } from 'node:crypto'

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** Serves `binary` as `name` with `sums` (changeable, to test a tampered or unlisted release). */
export function startReleaseServer(version: string, name: string, binary: string) {
  const state = { sums: `${sha256(binary)}  ${name}\n` }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === `/releases/download/v${version}/SHA256SUMS`) return new Response(state.sums)
      if (path === `/releases/download/v${version}/${name}`) return new Response(binary)
      return new Response('not found', { status: 404 })
    },
  })
  return { state, url: `http://127.0.0.1:${server.port}/releases`, stop: () => server.stop(true) }
}

/** The action's inputs as the runner passes them: `release-url` → INPUT_RELEASE_URL. */
export const inputVariables = (inputs: Record<string, string>) =>
  Object.fromEntries(Object.entries(inputs).map(([key, value]) => [`INPUT_${key.toUpperCase().replaceAll('-', '_')}`, value]))
