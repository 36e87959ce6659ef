// What the --render tests share: a loopback HTTPS site of the test's own (certificate made at test time,
// trusted through NODE_EXTRA_CA_CERTS of the command's environment, as a user's private CA would be), the
// renderer started against Debian's Chromium with a gate of the test's choosing, and the scanner over
// what it returns.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LoadedPage } from '../../src/cli/audit/pages'
import { createRenderer, httpOnlyGate, type RendererOptions, type RequestGate } from '../../src/cli/audit/render'
import { scanHtml } from '../../src/cli/audit/scan'
import { type HttpsImageServer, startHttpsImageServer } from '../support/https-image-server'
import { runCli } from '../support/process'

export const CHROMIUM = '/usr/bin/chromium'

export const html = (body: string, status = 200) => ({
  kind: 'bytes' as const,
  body: new TextEncoder().encode(body),
  contentType: 'text/html; charset=utf-8',
  status,
})

/** A 1×1 PNG. */
export const PNG = Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'))

export async function site(): Promise<HttpsImageServer> {
  const server = await startHttpsImageServer()
  for (const name of ['/a.png', '/b.png', '/c.png', '/bg.png', '/late.png', '/after-load.png', '/open.png', '/closed.png', '/declared.png'])
    server.route(name, { kind: 'bytes', body: PNG })
  return server
}

/** `alttext audit ARGS` in this process, in a temporary folder, trusting the site's certificate. */
export async function auditRendered(server: HttpsImageServer, args: string[], env: Record<string, string> = {}, read: string[] = []) {
  const cwd = mkdtempSync(join(tmpdir(), 'alttext-render-'))
  try {
    const result = await runCli(['audit', ...args], { NODE_EXTRA_CA_CERTS: server.caPath, ...env }, { cwd })
    const files = Object.fromEntries(read.map((name) => [name, readFileSync(join(cwd, name), 'utf8')]))
    return { ...result, files, json: () => JSON.parse(result.stdout) }
  } finally {
    rmSync(cwd, { recursive: true, force: true })
  }
}

/** The renderer with the test's gate (default: http(s) only) trusting the site's certificate. */
export function renderer(server: HttpsImageServer, options: Partial<RendererOptions> & { gate?: RequestGate } = {}) {
  return createRenderer({ env: { NODE_EXTRA_CA_CERTS: server.caPath, ALTTEXT_CHROMIUM: CHROMIUM }, gate: httpOnlyGate, ...options })
}

/** What the scanner finds in a rendered page. */
export function scanned(page: LoadedPage) {
  if (page.bytes === null) throw new Error(`not rendered: ${page.error}`)
  return scanHtml(page.bytes, 'alttext-test-marker')
}

export const urlSource = (url: string) => ({ kind: 'url' as const, url, depth: 0 })
