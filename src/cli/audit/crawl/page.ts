// A page URL fetched over HTTP through the gate (http.ts): 200 with an HTML (or no) content type, at
// most MAX_PAGE_BYTES; and the page's <link rel="canonical">, by which the crawl reads a page once.
import { decodeHTMLAttribute } from 'entities'
import type { LoadedPage, PageFetcher, UrlSource } from '../pages'
import { fetchThrough, readCapped } from './http'
import type { SiteAccess } from './site'

/** A page is refused above this size (bytes): no real page comes near it. */
export const MAX_PAGE_BYTES = 10 * 1024 * 1024
/** One page fetch, headers and body. */
const PAGE_TIMEOUT_MS = 30_000
/** Redirects followed for one page, as browsers allow about 20. */
const PAGE_REDIRECTS = 10

/** The default page fetcher: HTTP through `site`'s gate. */
export function httpPageFetcher(site: SiteAccess): PageFetcher {
  return async (source: UrlSource, signal?: AbortSignal): Promise<LoadedPage> => {
    const fail = (error: string): LoadedPage => ({ source, name: source.url, base: new URL(source.url), bytes: null, error })
    const fetched = await fetchThrough(site.gate, new URL(source.url), {
      accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1',
      maxRedirects: PAGE_REDIRECTS,
      timeoutMs: PAGE_TIMEOUT_MS,
      signal,
      ca: site.ca,
    })
    if (!fetched.ok) return fail(fetched.error)
    const { response } = fetched
    const type = response.headers.get('content-type') ?? ''
    const refuse = async (error: string) => {
      await response.body?.cancel().catch(() => {})
      return fail(error)
    }
    if (response.status !== 200) return refuse(`HTTP ${response.status}`)
    if (type !== '' && !/html/iu.test(type)) return refuse(`not an HTML page (${type.split(';')[0]})`)
    if (Number(response.headers.get('content-length')) > MAX_PAGE_BYTES) return refuse(`larger than ${MAX_PAGE_BYTES / 1024 / 1024} MB`)
    try {
      const read = await readCapped(response, MAX_PAGE_BYTES + 1)
      if (read.bytes.byteLength > MAX_PAGE_BYTES) return fail(`larger than ${MAX_PAGE_BYTES / 1024 / 1024} MB`)
      return { source, name: source.url, base: fetched.url, bytes: read.bytes, error: null }
    } catch (error) {
      return fail(`cannot fetch: ${(error as Error).message}`)
    }
  }
}

/** The page's canonical URL (the first <link rel="canonical" href>), resolved against `base`; null when none. */
export function canonicalOf(bytes: Uint8Array, base: URL): string | null {
  let found: string | null = null
  new HTMLRewriter()
    .on('link[rel][href]', {
      element(element) {
        if (found !== null) return
        const rel = (element.getAttribute('rel') ?? '').toLowerCase().split(/[\t\n\f\r ]+/u)
        if (!rel.includes('canonical')) return
        try {
          found = new URL(decodeHTMLAttribute(element.getAttribute('href') ?? '').trim(), base).href
        } catch {
          // No URL: no canonical.
        }
      },
    })
    .transform(bytes)
  return found
}
