// --render: each page URL is loaded in Chromium (playwright-core), the network left to settle, and the
// live DOM (shadow roots included, computed backgrounds of role=img written in) handed to the HTML scanner
// as the page's bytes. One browser per run, `tabs` pages at once, each in a context of its own (no cookie or
// storage shared between pages). The renderer owns the browser: close() ends it.
import type { Browser, BrowserContext, Page, Route } from 'playwright-core'
import type { Env } from '../../../config'
import { USER_AGENT } from '../crawl/http'
import { MAX_PAGE_BYTES } from '../crawl/page'
import type { LoadedPage, PageFetcher, UrlSource } from '../pages'
import { connectionSink, findChromium, launchChromium } from './chromium'
import { gatedFetch, type RequestGate, trustedCa } from './gate'
import { liveDom } from './live-dom'

export { httpOnlyGate, type RequestGate } from './gate'

/** Pages rendered at once by default: two tabs keep two cores busy without a page starving the other. */
export const RENDER_TABS = 2
/** The most one page may take to load and settle, as a plain fetch of a page (pages.ts). */
export const RENDER_CAP_MS = 30_000
/** The network has settled when no request has been in flight for this long. */
export const QUIET_MS = 500
/** Serialising the DOM: a page whose scripts hold the main thread gets this long after the cap. */
const SERIALISE_MS = 10_000
/** Requests of one page fetched at once (as a browser's per-host limit): at most this many bodies of MAX_PAGE_BYTES held. */
const FETCHES_PER_PAGE = 6

/** Runs at most `limit` of the functions given to it at once. */
function limiter(limit: number) {
  let running = 0
  const queue: (() => void)[] = []
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((resolve) => queue.push(resolve))
    running++
    try {
      return await work()
    } finally {
      running--
      queue.shift()?.()
    }
  }
}

export type RendererOptions = {
  /** The command's environment: ALTTEXT_CHROMIUM, PATH, NODE_EXTRA_CA_CERTS. */
  env: Env
  gate: RequestGate
  tabs?: number
  capMs?: number
  quietMs?: number
  /** Starts the browser (tests pass their own, to reach its pages); by default the Chromium found in `env`. */
  launch?: (executable: string | null, sinkPort: number) => Promise<Browser>
}

export type RenderStats = { pages: number; refused: number; strayConnections: number }

export type Renderer = {
  fetchPage: PageFetcher
  stats(): RenderStats
  close(): Promise<void>
}

/** Starts the browser; a UsageError when there is no Chromium or it does not start. */
export async function createRenderer(options: RendererOptions): Promise<Renderer> {
  const tabs = options.tabs ?? RENDER_TABS
  const capMs = options.capMs ?? RENDER_CAP_MS
  const quietMs = options.quietMs ?? QUIET_MS
  const ca = trustedCa(options.env)
  const sink = connectionSink()
  let browser: Browser
  try {
    browser = options.launch ? await options.launch(null, sink.port) : await launchChromium(findChromium(options.env), sink.port)
  } catch (error) {
    sink.stop()
    throw error
  }
  const stats = { pages: 0, refused: 0 }
  const waiting: (() => void)[] = []
  let free = tabs
  let closed = false
  const acquire = async () => {
    if (free > 0) free--
    else await new Promise<void>((resolve) => waiting.push(resolve))
  }
  const release = () => {
    const next = waiting.shift()
    if (next) next()
    else free++
  }

  const fetchPage: PageFetcher = async (source, signal) => {
    await acquire()
    try {
      if (closed || signal?.aborted) return failed(source, 'not read: the run was stopped')
      stats.pages++
      return await renderOne(browser, source, { gate: options.gate, ca, capMs, quietMs, signal, onRefused: () => stats.refused++ })
    } finally {
      release()
    }
  }

  return {
    fetchPage,
    stats: () => ({ ...stats, strayConnections: sink.connections() }),
    async close() {
      if (closed) return
      closed = true
      for (const next of waiting.splice(0)) next()
      try {
        await browser.close()
      } finally {
        sink.stop()
      }
    },
  }
}

const failed = (source: UrlSource, error: string): LoadedPage => ({ source, name: source.url, base: new URL(source.url), bytes: null, error })

type RenderSettings = {
  gate: RequestGate
  ca: string[] | undefined
  capMs: number
  quietMs: number
  signal: AbortSignal | undefined
  onRefused(): void
}

/** Where an address is, for a note: its origin and path, never its query (it may hold a token). */
const shown = (url: string) => {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return url.slice(0, 80)
  }
}

async function renderOne(browser: Browser, source: UrlSource, settings: RenderSettings): Promise<LoadedPage> {
  const stop = new AbortController()
  const signal = settings.signal
    ? AbortSignal.any([settings.signal, stop.signal, AbortSignal.timeout(settings.capMs)])
    : AbortSignal.any([stop.signal, AbortSignal.timeout(settings.capMs)])
  // The page itself, fetched here first: its redirects checked hop by hop, its answer checked as a plain fetch's.
  const first = await gatedFetch(
    new URL(source.url),
    { method: 'GET', headers: { 'user-agent': USER_AGENT, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1' } },
    { gate: settings.gate, signal, maxBytes: MAX_PAGE_BYTES, ca: settings.ca },
  )
  if (!first.ok) {
    if (first.refused) settings.onRefused()
    return failed(source, signal.aborted && !settings.signal?.aborted ? `cannot fetch: no answer within ${settings.capMs / 1000} s` : first.error)
  }
  if (first.status !== 200) return failed(source, `HTTP ${first.status}`)
  const type = first.headers['content-type'] ?? ''
  if (type !== '' && !/html/iu.test(type)) return failed(source, `not an HTML page (${type.split(';')[0]})`)
  const pageUrl = first.url.href

  let context: BrowserContext | undefined
  const notes: string[] = []
  let refused = 0
  let firstRefused = ''
  let navigatedTo: string | null = null
  let network: ReturnType<typeof trackNetwork> | undefined
  try {
    context = await browser.newContext({
      userAgent: USER_AGENT,
      serviceWorkers: 'block',
      acceptDownloads: false,
      permissions: [],
      viewport: { width: 1280, height: 800 },
    })
    const page = await context.newPage()
    // A popup is no page of the audit.
    context.on('page', (other) => {
      if (other !== page) void other.close().catch(() => {})
    })
    let documentServed = false
    // A navigation the page starts while it loads stops its loading: no load event will come.
    let navigationRefused = () => {}
    const navigationStopped = new Promise<void>((resolve) => {
      navigationRefused = resolve
    })
    const fetches = limiter(FETCHES_PER_PAGE)
    const refuse = (route: Route, url: string) => {
      refused++
      settings.onRefused()
      firstRefused ||= shown(url)
      return route.abort('blockedbyclient').catch(() => {})
    }
    await context.route('**/*', async (route) => {
      const request = route.request()
      const url = request.url()
      if (request.isNavigationRequest() && request.frame() === page.mainFrame()) {
        // The page asked for is the only document of the main frame; a navigation away is not followed.
        if (!documentServed && url === pageUrl) {
          documentServed = true
          return route.fulfill({ status: 200, headers: first.headers, body: Buffer.from(first.body) }).catch(() => {})
        }
        // 204 No Content: the browser stays on the document it has (an abort would show an error page instead).
        navigatedTo ??= shown(url)
        navigationRefused()
        return route.fulfill({ status: 204, body: '' }).catch(() => {})
      }
      let target: URL
      try {
        target = new URL(url)
      } catch {
        return refuse(route, url)
      }
      if (target.protocol !== 'http:' && target.protocol !== 'https:') return refuse(route, url)
      const answer = await fetches(() =>
        gatedFetch(
          target,
          { method: request.method(), headers: request.headers(), body: request.postDataBuffer() },
          { gate: settings.gate, signal, maxBytes: MAX_PAGE_BYTES, ca: settings.ca },
        ),
      )
      if (!answer.ok) {
        if (answer.refused) return refuse(route, url)
        return route.abort('failed').catch(() => {})
      }
      return route.fulfill({ status: answer.status, headers: answer.headers, body: Buffer.from(answer.body) }).catch(() => {})
    })
    // WebSockets are not requests a route sees: none is opened.
    await context.routeWebSocket(/.*/u, (socket) => socket.close({ code: 1008, reason: 'not allowed while auditing' }))

    const settled = trackNetwork(page, settings.quietMs)
    network = settled
    const crashed = new Promise<'crashed'>((resolve) => page.once('crash', () => resolve('crashed')))
    const aborted = new Promise<'aborted'>((resolve) =>
      signal.aborted ? resolve('aborted') : signal.addEventListener('abort', () => resolve('aborted'), { once: true }),
    )
    // The load event of the page's own document (goto's waitUntil would follow a navigation the page starts,
    // and that is answered 204), or a navigation refused while it loads.
    const loadEvent = Promise.race([new Promise<void>((resolve) => page.once('load', () => resolve())), navigationStopped])
    const loaded = page.goto(pageUrl, { waitUntil: 'commit', timeout: 0 }).then(
      () => loadEvent.then(() => 'loaded' as const),
      (error: Error) => (signal.aborted ? ('aborted' as const) : error),
    )
    const outcome = await Promise.race([
      loaded.then((result): Promise<'settled' | 'aborted' | Error> | 'aborted' | Error =>
        result === 'loaded' ? settled.quiet().then(() => 'settled' as const) : result,
      ),
      crashed,
      aborted,
    ])
    if (outcome === 'crashed') return failed(source, 'the page crashed in Chromium')
    if (outcome instanceof Error) return failed(source, `cannot load: ${outcome.message.split('\n')[0]}`)
    if (outcome === 'aborted') {
      if (settings.signal?.aborted) return failed(source, 'not read: the run was stopped')
      const busy = settled.inFlight()
      notes.push(
        `the page was still ${busy.count > 0 ? `loading after ${settings.capMs / 1000} s (${busy.count} ${busy.count === 1 ? 'request' : 'requests'} in flight, such as ${shown(busy.example)})` : `not loaded after ${settings.capMs / 1000} s`}: scanned as it was then`,
      )
    }
    const session = await context.newCDPSession(page)
    let slowTimer: ReturnType<typeof setTimeout> | undefined
    const serialised = await Promise.race([
      liveDom(session, MAX_PAGE_BYTES),
      crashed,
      new Promise<'slow'>((resolve) => {
        slowTimer = setTimeout(() => resolve('slow'), SERIALISE_MS)
      }),
    ])
      .catch((error: Error) => error)
      .finally(() => clearTimeout(slowTimer))
    if (serialised === 'crashed') return failed(source, 'the page crashed in Chromium')
    if (serialised === 'slow') return failed(source, `cannot read the rendered page: its scripts held it for more than ${SERIALISE_MS / 1000} s`)
    if (serialised instanceof Error) return failed(source, `cannot read the rendered page: ${serialised.message}`)
    if ('tooLong' in serialised) return failed(source, `the rendered page is larger than ${MAX_PAGE_BYTES / 1024 / 1024} MB`)
    if (navigatedTo !== null) notes.push(`the page tried to go to ${navigatedTo}; not followed (the page asked for was scanned)`)
    if (refused > 0) notes.push(`${refused} ${refused === 1 ? 'request' : 'requests'} refused and not sent, such as ${firstRefused}`)
    const current = page.url()
    const base = /^https?:/iu.test(current) ? new URL(current) : first.url
    const rendered: LoadedPage = { source, name: source.url, base, bytes: new TextEncoder().encode(serialised.html), error: null }
    if (notes.length > 0) rendered.note = notes.join('; ')
    return rendered
  } catch (error) {
    return failed(source, `cannot render: ${(error as Error).message.split('\n')[0]}`)
  } finally {
    stop.abort()
    network?.dispose()
    await context?.close().catch(() => {})
  }
}

/**
 * Counts the page's requests in flight; `quiet` resolves once none has been for `quietMs` (awaited after
 * the load event). `inFlight` names one still running, for the note of a page that never settles.
 */
function trackNetwork(page: Page, quietMs: number) {
  const open = new Set<string>()
  const ids = new WeakMap<object, string>()
  let counter = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let waiting: (() => void) | undefined
  const arm = () => {
    clearTimeout(timer)
    if (waiting && open.size === 0) timer = setTimeout(waiting, quietMs)
  }
  page.on('request', (request) => {
    const id = `${counter++} ${request.url()}`
    ids.set(request, id)
    open.add(id)
    arm()
  })
  const done = (request: object) => {
    const id = ids.get(request)
    if (id !== undefined) open.delete(id)
    arm()
  }
  page.on('requestfinished', done)
  page.on('requestfailed', done)
  return {
    quiet(): Promise<void> {
      return new Promise<void>((resolve) => {
        waiting = resolve
        arm()
      })
    },
    dispose() {
      clearTimeout(timer)
      waiting = undefined
    },
    inFlight(): { count: number; example: string } {
      const example = open.values().next().value ?? ''
      return { count: open.size, example: example.slice(example.indexOf(' ') + 1) }
    },
  }
}
