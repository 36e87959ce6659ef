// Child process for scenario 10 (uploads): the floor of an upload, a bare Bun.serve that does only the
// physical work of one: read the image's bytes from the socket (the request body as it is, one
// arrayBuffer) and decode, downscale to 1024 px and encode them once, exactly as scenario 2's floor
// does (lib/floor.ts). Each answer says, in Server-Timing, how long its handler took for each part,
// measured from the handler's start as the service's own stages are. Loopback only.
//   bun upload-floor.ts      POST /?format=jpeg&width=4000&height=3000 with the raw image bytes
// Prints `BENCH_READY {"url":...}`; exits when its stdin closes, or after 20 minutes.
import { boundLifetime } from './lib/child'
import { prepareBytes } from './lib/floor'
import type { BenchFormat } from './lib/images'

boundLifetime('upload-floor.ts', 20 * 60_000)

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  maxRequestBodySize: 64 * 1024 * 1024,
  async fetch(request) {
    const started = performance.now()
    const query = new URL(request.url).searchParams
    const bytes = new Uint8Array(await request.arrayBuffer())
    const read = performance.now()
    await prepareBytes(bytes, (query.get('format') ?? 'jpeg') as BenchFormat)
    const prepared = performance.now()
    return new Response(null, {
      status: 204,
      headers: { 'server-timing': `receive;dur=${(read - started).toFixed(2)}, prepare;dur=${(prepared - read).toFixed(2)}` },
    })
  },
})

console.log(`BENCH_READY ${JSON.stringify({ url: `http://127.0.0.1:${server.port}` })}`)
