// The crawl tests' own site: a loopback HTTPS origin (test/support/https-image-server.ts, a certificate
// made for the run) serving pages, robots.txt and sitemaps from a table, and keeping the headers of
// every request so a test can say what was sent where. The CLI trusts the certificate as a process
// would: NODE_EXTRA_CA_CERTS in its environment.
import { gzipSync } from 'fflate'
import { type HttpsImageServer, startHttpsImageServer } from '../support/https-image-server'

export type Route = string | Uint8Array | ((request: Request) => Response | Promise<Response>)

export type CrawlSite = {
  origin: string
  server: HttpsImageServer
  env: Record<string, string>
  /** Sets (or replaces) what a path answers. */
  set(path: string, route: Route): void
  hits(path: string): number
  /** Every request's headers, in order, with its path. */
  requests: { path: string; headers: Headers }[]
  stop(): Promise<void>
}

const typeOf = (path: string) =>
  path.endsWith('.txt')
    ? 'text/plain; charset=utf-8'
    : path.endsWith('.gz')
      ? 'application/gzip'
      : path.endsWith('.xml')
        ? 'application/xml'
        : 'text/html; charset=utf-8'

export async function startCrawlSite(routes: Record<string, Route> = {}): Promise<CrawlSite> {
  const server = await startHttpsImageServer()
  const requests: CrawlSite['requests'] = []
  const set = (path: string, route: Route) => {
    server.route(path, {
      kind: 'handler',
      fn: (request) => {
        requests.push({ path, headers: new Headers(request.headers) })
        if (typeof route === 'function') return route(request)
        return new Response(route, { headers: { 'content-type': typeOf(path) } })
      },
    })
  }
  for (const [path, route] of Object.entries(routes)) set(path, route)
  return {
    origin: server.origin,
    server,
    env: { NODE_EXTRA_CA_CERTS: server.caPath },
    set,
    hits: (path) => server.hits(path),
    requests,
    stop: () => server.stop(),
  }
}

export const page = (title: string, body: string, head = '') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>${body}</body></html>`

export const urlset = (urls: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.map((url) => `<url><loc>${url}</loc></url>`).join('\n')}\n</urlset>\n`

export const sitemapIndex = (urls: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.map((url) => `<sitemap><loc>${url}</loc></sitemap>`).join('\n')}\n</sitemapindex>\n`

export const gzip = (text: string) => gzipSync(new TextEncoder().encode(text))

/** A body generated as it is read, never materialised: `head`, then `filler` over and over up to `totalBytes`. */
export function generatedBody(head: string, filler: string, totalBytes: number): { body: ReadableStream<Uint8Array>; sent(): number } {
  const headBytes = new TextEncoder().encode(head)
  const chunk = new TextEncoder().encode(filler.repeat(Math.max(1, Math.floor(65536 / filler.length))))
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= totalBytes) return controller.close()
      const next = sent === 0 ? headBytes : chunk
      sent += next.byteLength
      controller.enqueue(next)
    },
  })
  return { body, sent: () => sent }
}
