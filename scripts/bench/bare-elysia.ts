// The baselines of scenario 1: a bare Elysia app, one route per endpoint, answering the same JSON bodies
// the service answered for GET /api/usage and POST /api/validate-key (captured by run.ts at start and
// passed in BENCH_BARE_BODIES). No request id, no access log, no authentication, no database: what the
// framework and the runtime cost alone. run.ts compiles it with the service's build flags
// (`bun build --compile --minify --target=bun`) and starts it the same way as the service (PORT, HOST,
// stdout to a file), each in its own process.
//
// With BENCH_BARE_FEATURES=1 it also does, in the cheapest way Elysia allows, what every response of the
// service must carry: a request id and `nosniff` header, the client's address and one access-log line
// written to its stdout file per turn. That is the floor under any service with those duties, so the
// report can say how much of the gap to the bare app they alone explain.
import { Elysia } from 'elysia'

const bodies = JSON.parse(process.env.BENCH_BARE_BODIES ?? '{}') as { usage?: unknown; validate?: unknown }
const hostname = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT ?? 0)

const routes = new Elysia()
  .get('/api/usage', () => bodies.usage)
  // Reads the JSON body, as any handler of this POST must.
  .post('/api/validate-key', ({ body, set }) => {
    if (typeof (body as { api_key?: unknown } | null)?.api_key === 'string') return bodies.validate
    set.status = 401
    return { error: 'invalid API key' }
  })

function withRequestDuties(): Elysia {
  type Meta = { id: string; client: string; startedAt: number }
  const metas = new WeakMap<Request, Meta>()
  const stdout = Bun.stdout.writer()
  let lines: string[] = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    stdout.write(`${lines.join('\n')}\n`)
    lines = []
    void stdout.flush()
  }
  return new Elysia()
    .onRequest(({ request, server, set }) => {
      const meta = {
        id: request.headers.get('x-request-id') ?? crypto.randomUUID(),
        client: server?.requestIP(request)?.address ?? 'unknown',
        startedAt: performance.now(),
      }
      metas.set(request, meta)
      set.headers['x-request-id'] = meta.id
      set.headers['x-content-type-options'] = 'nosniff'
    })
    .onAfterResponse({ as: 'global' }, ({ request, path, set }) => {
      const meta = metas.get(request)
      if (meta === undefined) return
      metas.delete(request)
      lines.push(
        `{"time":"${new Date().toISOString()}","level":"info","msg":"request","method":"${request.method}","path":${JSON.stringify(path)},"status":${set.status},"duration_ms":${Math.round((performance.now() - meta.startedAt) * 100) / 100},"request_id":${JSON.stringify(meta.id)},"client":"${meta.client}"}`,
      )
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    })
}

const app = (process.env.BENCH_BARE_FEATURES === '1' ? withRequestDuties().use(routes) : routes).listen({ hostname, port })

console.log(JSON.stringify({ msg: 'listening', url: `http://${hostname}:${app.server?.port}` }))
