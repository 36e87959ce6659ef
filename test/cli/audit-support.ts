// What the audit tests share: the fixture site copied to a temporary folder, a "model" that answers by
// image size (so each fixture image gets its own alt text), a loopback HTTP server for page URLs, and
// running `alttext audit` (in this process: runCli) against the real service.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Behaviour } from '../support/fake-ollama'
import { REPO_ROOT, runCli } from '../support/process'

export const FIXTURE_SITE = join(REPO_ROOT, 'test', 'fixtures', 'site')

/** The fixture images by width: logo.png 64, kite.jpg 320, team.jpg 360, divider.png 600, the data: icon 16. */
export const REPLIES: Record<number, string> = {
  64: 'The Harbour Kite Club logo: a red kite over blue waves.',
  320: 'Two children launch a red kite on a windy beach.',
  360: 'Twelve club members line up with their kites; fish & chips wait on the pier.',
  16: 'A small red kite icon.',
}

export const MODEL: Partial<Behaviour> = {
  reply: (context) => REPLIES[context.images[0]?.width ?? 0] ?? 'A picture the tests did not plan for.',
  // The 600×12 divider: a thin strip is decorative.
  decorative: (image) => (image.width ?? 0) >= (image.height ?? 1) * 10,
  decorativeReason: 'a thin divider line',
}

/** A private copy of the fixture site (tests write --fix output and reports beside it). */
export function siteCopy(): { dir: string; site: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'alttext-audit-test-'))
  const site = join(dir, 'site')
  cpSync(FIXTURE_SITE, site, { recursive: true })
  return { dir, site, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

export function audit(args: string[], env: Record<string, string> = {}, cwd?: string) {
  return runCli(['audit', ...args], env, { cwd })
}

/** A new temporary folder (named by `prefix`) holding `docs/img/` with the fixture site's images, and `docs/sub` folders when asked. */
export function docsWithImages(prefix: string, sub: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  mkdirSync(join(dir, 'docs', ...sub), { recursive: true })
  cpSync(join(FIXTURE_SITE, 'img'), join(dir, 'docs', 'img'), { recursive: true })
  return dir
}

export const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'))

/** A loopback HTTP server of HTML pages by path; counts the requests of each path. */
export function pageServer(pages: Record<string, string | (() => Response)>) {
  const hits = new Map<string, number>()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname
      hits.set(path, (hits.get(path) ?? 0) + 1)
      const page = pages[path]
      if (page === undefined) return new Response('not found', { status: 404 })
      if (typeof page === 'function') return page()
      return new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    hits: (path: string) => hits.get(path) ?? 0,
    total: () => [...hits.values()].reduce((a, b) => a + b, 0),
    stop: () => server.stop(true),
  }
}

/** The attribute as the fix writes it: double quotes, & " < > escaped. */
export const attr = (value: string) => `"${value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')}"`

/**
 * A loopback HTTP proxy in front of the service that keeps every request body: what the command
 * uploaded, byte for byte, whatever the service then made of it.
 */
export function recordingProxy(target: string) {
  const bodies: Buffer[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : Buffer.from(await request.arrayBuffer())
      if (body) bodies.push(body)
      const headers = new Headers(request.headers)
      headers.delete('host')
      headers.delete('content-length')
      return fetch(`${target}${url.pathname}${url.search}`, { method: request.method, headers, body })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    /** Did any request carry these bytes? */
    sent: (bytes: Uint8Array) => bodies.some((body) => body.includes(bytes)),
    uploads: () => bodies.length,
    stop: () => server.stop(true),
  }
}
