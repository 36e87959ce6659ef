// The pages an audit reads: HTML files, directories walked for them, and page URLs fetched by the
// command itself on the user's machine (it is the user's own request), with --sitemap and --crawl the
// pages of their sites (crawl/). Also how an image address on a page becomes something to send: a local file (uploaded)
// or an http(s) URL (sent as image_url).
import { readFileSync, realpathSync } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { type CrawlOutcome, crawlUrls } from './crawl/crawl'
import { MAX_PAGE_BYTES, httpPageFetcher } from './crawl/page'
import { createSiteAccess, type SiteAccess } from './crawl/site'

/** An EPUB is refused above this size (bytes): a book is its pictures too. */
export const MAX_BOOK_BYTES = 256 * 1024 * 1024

/** The files a folder is walked for: HTML pages, Markdown and MDX files, Jupyter notebooks, EPUB books. */
const AUDITED_FILE = /\.(?:html?|xhtml|md|markdown|mdx|ipynb|epub)$/iu
const BOOK_FILE = /\.epub$/iu

/** A local HTML file and the folder that stands for the site's root (for "/img/a.png" and --fix paths). */
export type FileSource = { kind: 'file'; path: string; root: string }
export type UrlSource = { kind: 'url'; url: string; depth: number }
export type PageSource = FileSource | UrlSource

/** How a URL page is read: fetched over HTTP (loadUrl), or rendered in a browser (--render). */
export type PageFetcher = (source: UrlSource, signal?: AbortSignal) => Promise<LoadedPage>

export type LoadedPage = {
  source: PageSource
  /** How the report names the page: the file's path as given, or the page's URL. */
  name: string
  /** The address image sources resolve against: the page URL (after redirects), or file:///<path under root>. */
  base: URL
  bytes: Uint8Array | null
  error: string | null
  /** What the report should say of a page read all the same (a rendered page scanned before it settled). */
  note?: string
}

/** The command's arguments as page sources: files, directories (walked for AUDITED_FILE), URLs. */
export async function collectSources(args: string[], rootFlag: string | undefined, cwd: string): Promise<PageSource[]> {
  const sources: PageSource[] = []
  for (const arg of args) {
    if (/^https?:\/\//iu.test(arg)) {
      let url: URL
      try {
        url = new URL(arg)
      } catch {
        throw new Error(`not a URL: ${arg}`)
      }
      url.hash = ''
      sources.push({ kind: 'url', url: url.href, depth: 0 })
      continue
    }
    const info = await stat(resolve(cwd, arg)).catch(() => null)
    if (!info) throw new Error(`no such file or directory: ${arg}`)
    if (info.isDirectory()) {
      const root = resolve(cwd, rootFlag ?? arg)
      for (const path of await walkHtml(resolve(cwd, arg))) sources.push({ kind: 'file', path, root })
    } else {
      sources.push({ kind: 'file', path: resolve(cwd, arg), root: resolve(cwd, rootFlag ?? dirname(arg)) })
    }
  }
  return sources
}

/** The files to audit under `dir`, sorted, skipping hidden folders and node_modules. */
async function walkHtml(dir: string): Promise<string[]> {
  const found: string[] = []
  const entries = await readdir(dir, { withFileTypes: true })
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) found.push(...(await walkHtml(path)))
    else if (entry.isFile() && AUDITED_FILE.test(entry.name)) found.push(path)
  }
  return found
}

/** The file's path as the report shows it: relative to the working directory `cwd` when inside it. */
export function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path)
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep) ? rel : path
}

/** file:///<the file's path under its root>: root-relative sources ("/img/a.png") then resolve within the root. */
function fileBase(source: FileSource): URL {
  const under = relative(source.root, source.path).split(sep).map(encodeURIComponent).join('/')
  return new URL(`file:///${under.startsWith('..') ? encodeURIComponent(source.path.split(sep).at(-1) ?? '') : under}`)
}

export function loadFile(source: FileSource, cwd: string): LoadedPage {
  const name = displayPath(source.path, cwd)
  try {
    // Read at once: a thousand small files are read faster one after the other than through the pool.
    const buffer = readFileSync(source.path)
    const bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
    const max = BOOK_FILE.test(source.path) ? MAX_BOOK_BYTES : MAX_PAGE_BYTES
    if (bytes.length > max) return { source, name, base: fileBase(source), bytes: null, error: `larger than ${max / 1024 / 1024} MB` }
    return { source, name, base: fileBase(source), bytes, error: null }
  } catch (error) {
    return { source, name, base: fileBase(source), bytes: null, error: `cannot read: ${(error as Error).message}` }
  }
}

/**
 * Loads every source: files first, then URL pages through crawl/crawl.ts: with `sitemap`, the pages the
 * sites' sitemaps list; with `crawl` > 0, same-origin links followed that many steps (each start URL keeps
 * to its own origin), while fewer than `maxPages` pages are known: the pages given are always read, the
 * limit holds what the sitemaps and crawling add. `onPage` sees each page as it loads (the scan happens
 * there) and returns the page's links. `site` is how URLs are reached (crawl/site.ts: the address gate,
 * private-page fields, per-host politeness); `fetchPage` how a URL page is read (HTTP through the gate, or
 * a browser for --render).
 */
export async function loadPages(
  sources: PageSource[],
  options: {
    crawl: number
    maxPages: number
    cwd: string
    sitemap?: boolean
    signal?: AbortSignal
    site?: SiteAccess
    fetchPage?: PageFetcher
    onPage: (page: LoadedPage) => string[]
    onNote?: (line: string) => void
    exclude?: (url: string) => boolean
  },
): Promise<CrawlOutcome> {
  const seen = new Set<string>()
  for (const source of sources) {
    if (options.signal?.aborted) break
    if (source.kind !== 'file' || seen.has(source.path)) continue
    seen.add(source.path)
    options.onPage(loadFile(source, options.cwd))
  }
  const urls = sources.filter((source): source is UrlSource => source.kind === 'url')
  const site = options.site ?? createSiteAccess({ auditedOrigins: auditedOrigins(sources) })
  return crawlUrls(urls, {
    crawl: options.crawl,
    maxPages: options.maxPages,
    known: seen.size,
    sitemap: options.sitemap === true,
    signal: options.signal,
    site,
    fetchPage: options.fetchPage ?? httpPageFetcher(site),
    onPage: options.onPage,
    onNote: options.onNote,
    exclude: options.exclude,
  })
}

/** The origins of the page URLs given: the user's own request (crawl/gate.ts). */
export function auditedOrigins(sources: PageSource[]): string[] {
  return [...new Set(sources.flatMap((source) => (source.kind === 'url' ? [new URL(source.url).origin] : [])))]
}

/** An image to send: a local file, an http(s) URL, or the bytes of a data: URL. */
export type ImageTarget = { file: string } | { url: string } | { data: Uint8Array; type: string }

/**
 * Why an image is not sent. `unseen`: its address is a template tag (Jekyll, Hugo) that only the site's
 * build resolves, so the model cannot see the image; its alt text is still linted and can be written.
 */
export type Unresolved = { error: string; unseen?: boolean }

const TEMPLATE_TAG = /\{\{.*?\}\}|\{%.*?%\}/su

/** Where an image address on `page` points; why not when it cannot be sent. */
export function resolveImage(page: LoadedPage, base: string | null, src: string | null): ImageTarget | Unresolved {
  if (src === null || src === '') return { error: 'the image has no src' }
  if (/^data:/iu.test(src)) {
    const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/isu.exec(src)
    if (!match) return { error: 'unreadable data: URL' }
    const body = match[3] ?? ''
    const data = /;base64/iu.test(match[2] ?? '') ? new Uint8Array(Buffer.from(body, 'base64')) : new TextEncoder().encode(decodeURIComponent(body))
    return { data, type: match[1] || 'application/octet-stream' }
  }
  const tag = TEMPLATE_TAG.exec(src)
  if (tag) return { error: `not checkable by the model: the address is a template tag (${tag[0]}), which only the site's build resolves`, unseen: true }
  let url: URL
  try {
    const pageBase = base ? new URL(base, page.base) : page.base
    url = new URL(src, pageBase)
  } catch {
    return { error: `not an address: ${src}` }
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') return { url: url.href }
  if (url.protocol === 'file:' && page.source.kind === 'file') return siteFile(page.source.root, url.pathname)
  return { error: `cannot send a ${url.protocol} image` }
}

const isInside = (root: string, path: string) => {
  const rel = relative(root, path)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

/**
 * The file a root-relative image path names, only when it lies inside the site root. The URL parser
 * has already removed the plain dot segments; what is left may still hold encoded ones ("%2e%2e%2f"
 * decodes to "../"), so the decoded path is normalised again, and then its real path (symbolic links
 * followed, the root's too) must be inside the root's real path as well.
 */
function siteFile(root: string, pathname: string): ImageTarget | { error: string } {
  let decoded: string
  try {
    decoded = decodeURIComponent(pathname)
  } catch {
    return { error: `unreadable address: ${pathname}` }
  }
  if (decoded.includes('\0')) return { error: `unreadable address: ${pathname}` }
  const file = resolve(root, `.${sep}${decoded.split('/').join(sep)}`)
  const refused = (what: string) => ({ error: `refused: ${what} is outside the site root ${root}; not read` })
  if (!isInside(root, file)) return refused(file)
  let real: string
  try {
    real = realpathSync(file)
  } catch {
    // Not there (or not readable): the upload says so; there is nothing to read outside either.
    return { file }
  }
  if (!isInside(realpathSync(root), real)) return refused(`${file} is a symbolic link to ${real}, which`)
  return { file }
}

/** A link's target as the context names it: a path on the local site, or the absolute URL. */
export function linkTarget(page: LoadedPage, base: string | null, href: string): string | null {
  try {
    const url = new URL(href.trim(), base ? new URL(base, page.base) : page.base)
    if (url.protocol === 'file:') return url.pathname
    return url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'mailto:' || url.protocol === 'tel:' ? url.href : null
  } catch {
    return null
  }
}

/** Where --fix writes a page's copy under `outDir`; null when the page has no safe place there. */
export function fixPath(page: LoadedPage, outDir: string): string | null {
  let path: string
  if (page.source.kind === 'file') {
    const under = relative(page.source.root, page.source.path)
    path = join(outDir, under.startsWith('..') ? (page.source.path.split(sep).at(-1) ?? 'page.html') : under)
  } else {
    const url = new URL(page.source.url)
    let pathname = url.pathname.endsWith('/') ? `${url.pathname}index.html` : url.pathname
    if (!/\.[a-z0-9]{1,8}$/iu.test(pathname)) pathname += '.html'
    const segments = pathname
      .split('/')
      .filter(Boolean)
      .map((segment) => segment.replace(/[\\:*?"<>|\x00-\x1f]/gu, '_'))
    path = join(outDir, url.host.replace(':', '_'), ...segments)
  }
  const out = resolve(outDir)
  return resolve(path).startsWith(out + sep) ? path : null
}
