// Scenario 11: the web console. Lighthouse (its default mobile settings: a mid-range phone on a slow
// 4G network, simulated) with Debian's Chromium, signed in, on the overview, keys and try-it pages of
// the compiled service; and the console's JavaScript + CSS as sent, gzipped.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { LighthouseResult } from '../lighthouse'
import { anomalies, BENCH_DIR, BUN, type Fixtures, log, loopback, register, ROUNDS, serviceEnv } from '../lib/common'
import { runForResult, startService } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure } from '../lib/stats'

export const CONSOLE = {
  pages: { '/': 'overview', '/keys': 'keys', '/try': 'try it' } as Record<string, string>,
  targets: { performance: 95, accessibility: 100, bestPractices: 95 },
  maxGzipBytes: 60 * 1024,
}

export type ConsoleResult = { gzipBytes: number; rawBytes: number; assets: string[]; lighthouse: LighthouseResult }

const EMAIL = 'console@example.com'
const PASSWORD = 'correct horse battery staple'

export async function measureConsole(fx: Fixtures, dbPath: string): Promise<ConsoleResult> {
  if (!existsSync('/usr/bin/chromium')) throw new Error('Chromium is missing at /usr/bin/chromium (apt-get install chromium)')
  log(`scenario 11 (console): Lighthouse on ${Object.keys(CONSOLE.pages).join(', ')}, ${ROUNDS} round(s)`)
  const service = await startService(fx.binary, serviceEnv(fx, dbPath, fx.ollamaFast), join(fx.logDir, 'console.log'))
  try {
    // An account with something to show: a description, and a second key.
    const { apiKey } = await register(service.url, EMAIL)
    const post = (path: string, body: unknown) =>
      fetch(loopback(service.url + path), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      })
    if ((await post('/api/alt-text', { image_url: fx.imageOrigin + fx.images.small.path })).status !== 200)
      anomalies.push('console: the seed description failed')
    await post('/api/keys', { label: 'staging CMS', expires_in_days: 90 })

    const html = await (await fetch(loopback(`${service.url}/`))).text()
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!)
    let gzipBytes = 0
    let rawBytes = 0
    for (const path of assets) {
      const zipped = await fetch(loopback(service.url + path), { headers: { 'accept-encoding': 'gzip' }, decompress: false } as RequestInit)
      if (zipped.headers.get('content-encoding') !== 'gzip') anomalies.push(`console: ${path} was not sent gzipped`)
      gzipBytes += (await zipped.arrayBuffer()).byteLength
      rawBytes += (await (await fetch(loopback(service.url + path), { headers: { 'accept-encoding': 'identity' } })).arrayBuffer()).byteLength
    }

    const lighthouse = await runForResult<LighthouseResult>('lighthouse', [BUN, join(BENCH_DIR, 'lighthouse.ts')], {
      BENCH_LIGHTHOUSE: JSON.stringify({ url: service.url, email: EMAIL, password: PASSWORD, paths: Object.keys(CONSOLE.pages), runs: ROUNDS }),
    })
    for (const [path, runs] of Object.entries(lighthouse.pages))
      log(
        `console ${path}: performance ${runs.map((r) => r.performance).join('/')}, accessibility ${runs.map((r) => r.accessibility).join('/')}, best practices ${runs.map((r) => r.bestPractices).join('/')}`,
      )
    return { gzipBytes, rawBytes, assets, lighthouse }
  } finally {
    await service.stop()
  }
}

export function consoleRows(result: ConsoleResult): Row[] {
  const scenario = '11 console'
  const rows: Row[] = [
    {
      scenario,
      figure: `JS + CSS sent gzipped (${result.assets.length} files, ${(result.rawBytes / 1024).toFixed(0)} KB unzipped)`,
      unit: 'bytes',
      value: figure([result.gzipBytes]),
      target: `≤ ${CONSOLE.maxGzipBytes / 1024} KB`,
      met: result.gzipBytes <= CONSOLE.maxGzipBytes,
    },
  ]
  const { targets } = CONSOLE
  for (const [path, name] of Object.entries(CONSOLE.pages)) {
    const runs = result.lighthouse.pages[path] ?? []
    const scores = (pick: (run: (typeof runs)[number]) => number) => figure(runs.map(pick))
    const performance = scores((r) => r.performance)
    const accessibility = scores((r) => r.accessibility)
    const bestPractices = scores((r) => r.bestPractices)
    rows.push(
      {
        scenario,
        figure: `${name}: Lighthouse performance (mobile)`,
        unit: 'count',
        value: performance,
        target: `≥ ${targets.performance}`,
        met: runs.length > 0 && performance.min >= targets.performance,
      },
      {
        scenario,
        figure: `${name}: Lighthouse accessibility`,
        unit: 'count',
        value: accessibility,
        target: `${targets.accessibility}`,
        met: runs.length > 0 && accessibility.min >= targets.accessibility,
      },
      {
        scenario,
        figure: `${name}: Lighthouse best practices`,
        unit: 'count',
        value: bestPractices,
        target: `≥ ${targets.bestPractices}`,
        met: runs.length > 0 && bestPractices.min >= targets.bestPractices,
      },
      { scenario, figure: `${name}: largest contentful paint (simulated)`, unit: 'ms', value: scores((r) => r.lcpMs), met: null },
      { scenario, figure: `${name}: cumulative layout shift (×1000)`, unit: 'count', value: scores((r) => Math.round(r.cls * 1000)), met: null },
    )
    const misses = [...new Set(runs.flatMap((r) => r.misses))]
    if (misses.length) anomalies.push(`console ${name}: audits below full marks: ${misses.join('; ')}`)
  }
  return rows
}
