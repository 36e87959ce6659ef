// A sitemap (sitemaps.org 0.9: <urlset> of <url><loc>, or <sitemapindex> of <sitemap><loc>), read as
// it arrives: gzip inflated in small steps (a compressed bomb never inflates far past the cap), the XML
// through saxes' streaming parser, entries handed on a chunk at a time, so a 10 GB sitemap costs the
// bytes read up to the cap and memory for one chunk. Stops at sitemaps.org's limits per file.
import { Gunzip } from 'fflate'
import { SaxesParser } from 'saxes'

/** sitemaps.org: a sitemap holds at most 50,000 URLs and 50 MB uncompressed. */
export const SITEMAP_MAX_BYTES = 50 * 1024 * 1024
export const SITEMAP_MAX_URLS = 50_000
const SITEMAP_NS = 'http://www.sitemaps.org/schemas/sitemap/0.9'
/** sitemaps.org: a URL under 2,048 characters. */
const MAX_LOC_CHARACTERS = 2048
/** Compressed bytes given to the inflater at once: at most ~1,000 times as many come out of one step. */
const INFLATE_STEP = 4096

export type SitemapItem = { kind: 'page' | 'sitemap'; url: string }
export type SitemapLimits = { maxBytes: number; maxUrls: number }

const mb = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MB` : `${bytes} bytes`)

/**
 * The entries of one sitemap, a batch per chunk read; resolves (the generator's return value) to why the
 * file was not read to its end, or null. `base` resolves relative <loc>s. Stopping early (return())
 * cancels the body.
 */
export async function* sitemapEntries(
  body: ReadableStream<Uint8Array> | null,
  base: URL,
  limits: SitemapLimits = { maxBytes: SITEMAP_MAX_BYTES, maxUrls: SITEMAP_MAX_URLS },
): AsyncGenerator<SitemapItem[], string | null> {
  if (body === null) return 'an empty answer'
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const parser = new SaxesParser({ xmlns: true, position: false })
  let batch: SitemapItem[] = []
  let failure: string | null = null
  let stopped = false
  let root: 'urlset' | 'sitemapindex' | null = null
  let depth = 0
  let entryOpen = false
  let loc: string | null = null
  let urls = 0
  let inflated = 0
  const fail = (why: string) => {
    failure ??= why
    stopped = true
  }

  parser.on('error', (error) => {
    fail(`not well-formed XML: ${error.message}`)
    throw error
  })
  parser.on('opentag', (tag) => {
    depth++
    const ours = tag.uri === SITEMAP_NS || tag.uri === ''
    if (depth === 1) {
      if (ours && (tag.local === 'urlset' || tag.local === 'sitemapindex')) root = tag.local
      else fail(`not a sitemap: the root element is <${tag.name}>, not <urlset> or <sitemapindex>`)
    } else if (depth === 2) entryOpen = ours && tag.local === (root === 'urlset' ? 'url' : 'sitemap')
    else if (depth === 3 && entryOpen && ours && tag.local === 'loc') loc = ''
  })
  const onText = (text: string) => {
    if (loc !== null && loc.length <= MAX_LOC_CHARACTERS) loc += text.slice(0, MAX_LOC_CHARACTERS + 1 - loc.length)
  }
  parser.on('text', onText)
  parser.on('cdata', onText)
  parser.on('closetag', () => {
    if (depth === 3 && loc !== null) {
      const text = loc.trim()
      loc = null
      if (text !== '' && text.length <= MAX_LOC_CHARACTERS && urls < limits.maxUrls) {
        try {
          batch.push({ kind: root === 'urlset' ? 'page' : 'sitemap', url: new URL(text, base).href })
          urls++
        } catch {
          // A <loc> that is no URL is left out, as search engines leave it.
        }
      } else if (urls >= limits.maxUrls)
        fail(
          `more than ${limits.maxUrls.toLocaleString('en')} URLs (the sitemaps.org limit per file): the first ${limits.maxUrls.toLocaleString('en')} are read`,
        )
    }
    depth--
  })

  const feed = (bytes: Uint8Array) => {
    if (stopped) return
    const room = limits.maxBytes - inflated
    const part = bytes.byteLength > room ? bytes.subarray(0, room) : bytes
    inflated += part.byteLength
    try {
      parser.write(decoder.decode(part, { stream: true }))
    } catch {
      stopped = true
    }
    if (part !== bytes) fail(`larger than ${mb(limits.maxBytes)} uncompressed (the sitemaps.org limit per file): cut there, the URLs before the cut are read`)
  }
  let gunzip: Gunzip | null | undefined
  try {
    while (!stopped) {
      const { done, value } = await reader.read()
      if (done) break
      if (gunzip === undefined) gunzip = value[0] === 0x1f && value[1] === 0x8b ? new Gunzip((chunk) => feed(chunk)) : null
      if (gunzip === null) feed(value)
      else {
        for (let at = 0; at < value.byteLength && !stopped; at += INFLATE_STEP) {
          try {
            gunzip.push(value.subarray(at, at + INFLATE_STEP))
          } catch (error) {
            fail(`not a readable gzip file: ${(error as Error).message}`)
          }
        }
      }
      if (batch.length > 0) {
        const out = batch
        batch = []
        yield out
      }
    }
    if (!stopped) {
      try {
        gunzip?.push(new Uint8Array(0), true)
        parser.write(decoder.decode()).close()
      } catch (error) {
        fail(gunzip && !failure ? `not a readable gzip file: ${(error as Error).message}` : 'not well-formed XML')
      }
      if (root === null) fail('not a sitemap: no <urlset> or <sitemapindex>')
    }
    if (batch.length > 0) yield batch
    return failure
  } catch (error) {
    return `cannot read: ${(error as Error).message}`
  } finally {
    await reader.cancel().catch(() => {})
  }
}
