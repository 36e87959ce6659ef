// The baseline of scenario 1: a bare Elysia app, one route per endpoint, answering the same JSON bodies
// the service answered for GET /api/usage and POST /api/validate-key (captured by run.ts at start and
// passed in BENCH_BARE_BODIES). No request id, no access log, no authentication, no database: what the
// framework and the runtime cost alone. run.ts compiles it with the service's build flags
// (`bun build --compile --minify --target=bun`) and starts it the same way as the service (PORT, HOST,
// stdout to a file), each in its own process.
import { Elysia } from 'elysia'

const bodies = JSON.parse(process.env.BENCH_BARE_BODIES ?? '{}') as { usage?: unknown; validate?: unknown }
const hostname = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT ?? 0)

const app = new Elysia()
  .get('/api/usage', () => bodies.usage)
  // Reads the JSON body, as any handler of this POST must.
  .post('/api/validate-key', ({ body, set }) => {
    if (typeof (body as { api_key?: unknown } | null)?.api_key === 'string') return bodies.validate
    set.status = 401
    return { error: 'invalid API key' }
  })
  .listen({ hostname, port })

console.log(JSON.stringify({ msg: 'listening', url: `http://${hostname}:${app.server?.port}` }))
