// The console's files: the HTML page, its script, stylesheet and icon. A compiled binary carries them
// (Bun bundles the HTML import at build time and lists the outputs in `files`); run from source, they are
// bundled here on first use, in memory. Either way they are read once, gzipped once, and served from memory.
import { basename } from 'node:path'
import type { HTMLBundle } from 'bun'
import { NO_SESSION_ATTRIBUTE } from './paths'

export type ConsoleFile = {
  bytes: Uint8Array
  gzip: Uint8Array
  type: string
  etag: string
}

export type ConsoleFiles = {
  /** The HTML page, its script and stylesheet references pointing under /assets/. */
  page: ConsoleFile
  /** The same page marked for a browser that sent no session cookie (see NO_SESSION_ATTRIBUTE). */
  pageWithoutSession: ConsoleFile
  /** The script, stylesheet and other assets by file name (content-hashed). */
  assets: Map<string, ConsoleFile>
}

/** Where the page's assets are served from. */
export const ASSET_PREFIX = '/assets/'

type Output = { path: string; type: string; bytes: Uint8Array }

async function builtOutputs(files: NonNullable<HTMLBundle['files']>): Promise<Output[]> {
  return Promise.all(files.map(async (file) => ({ path: file.path, type: file.headers['content-type'], bytes: await Bun.file(file.path).bytes() })))
}

async function bundleNow(index: string): Promise<Output[]> {
  const result = await Bun.build({ entrypoints: [index], target: 'browser', minify: true })
  if (!result.success) throw new Error(`the console did not bundle: ${result.logs.map(String).join('; ')}`)
  return Promise.all(result.outputs.map(async (output) => ({ path: output.path, type: output.type, bytes: new Uint8Array(await output.arrayBuffer()) })))
}

function file(bytes: Uint8Array, type: string): ConsoleFile {
  return { bytes, gzip: Bun.gzipSync(bytes as Uint8Array<ArrayBuffer>, { level: 9 }), type, etag: `"${Bun.hash(bytes).toString(36)}"` }
}

/** Points every script, stylesheet and icon reference of the page at /assets/<name>; marks it when asked. */
async function rewritePage(html: Uint8Array, names: Set<string>, noSession: boolean): Promise<Uint8Array> {
  const point = (attribute: string) => ({
    element(element: HTMLRewriterTypes.Element) {
      const value = element.getAttribute(attribute)
      if (value === null || /^[a-z]+:/i.test(value)) return
      const name = basename(value)
      if (names.has(name)) element.setAttribute(attribute, ASSET_PREFIX + name)
    },
  })
  const rewritten = new HTMLRewriter()
    .on('html', {
      element(element) {
        if (noSession) element.setAttribute(NO_SESSION_ATTRIBUTE, '')
      },
    })
    .on('script[src]', point('src'))
    .on('link[href]', point('href'))
    .on('img[src]', point('src'))
    .transform(new Response(html))
  return new Uint8Array(await rewritten.arrayBuffer())
}

export async function loadConsoleFiles(bundle: HTMLBundle): Promise<ConsoleFiles> {
  const outputs = bundle.files ? await builtOutputs(bundle.files) : await bundleNow(bundle.index)
  // Bun.build marks every output of an HTML entry point with the `html` loader: the extension tells.
  const html = outputs.find((output) => output.path.endsWith('.html'))
  if (!html) throw new Error('the console bundle has no HTML page')
  const others = outputs.filter((output) => output !== html)
  const assets = new Map(others.map((output) => [basename(output.path), file(output.bytes, output.type)]))
  const names = new Set(assets.keys())
  const page = async (noSession: boolean) => file(await rewritePage(html.bytes, names, noSession), 'text/html; charset=utf-8')
  return { page: await page(false), pageWithoutSession: await page(true), assets }
}

/** Loads the files on first use and keeps them; a failed load is tried again by the next request. */
export function consoleFileLoader(bundle: HTMLBundle): () => Promise<ConsoleFiles> {
  let loading: Promise<ConsoleFiles> | undefined
  return () => {
    loading ??= loadConsoleFiles(bundle).catch((error: unknown) => {
      loading = undefined
      throw error
    })
    return loading
  }
}
