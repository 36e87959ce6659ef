// Child process of scenario 11 (console): Lighthouse, with Debian's Chromium, on console pages of a
// running service, signed in. Chromium runs with a profile of its own (so Lighthouse's tab shares the
// session cookie) and without its background services; every page is on loopback.
//   BENCH_LIGHTHOUSE='{"url":..., "email":..., "password":..., "paths":["/","/keys","/try"], "runs":3}' bun lighthouse.ts
// Prints one line `BENCH_RESULT {json}`: for each path, one entry per run.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import lighthouse from 'lighthouse'
import { chromium } from 'playwright-core'
import { boundLifetime } from './lib/child'
import { loopback } from './lib/common'

type Options = { url: string; email: string; password: string; paths: string[]; runs: number }

export type LighthouseRun = {
  performance: number
  accessibility: number
  bestPractices: number
  fcpMs: number
  lcpMs: number
  tbtMs: number
  cls: number
  /** Accessibility and best-practices audits below full marks, for the report's anomalies. */
  misses: string[]
}
export type LighthouseResult = { lighthouse: string; chromium: string; pages: Record<string, LighthouseRun[]> }

const CHROMIUM = '/usr/bin/chromium'

/** One Lighthouse run; a run whose trace failed (NO_NAVSTART and the like, on a busy machine) is tried again, twice at most. */
async function audit(port: number, base: string, path: string) {
  let failure = ''
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await lighthouse(loopback(base + path), {
      port,
      output: 'json',
      logLevel: 'error',
      onlyCategories: ['performance', 'accessibility', 'best-practices'],
      // Keep the session cookie: the pages measured are the signed-in ones.
      disableStorageReset: true,
    })
    const lhr = result?.lhr
    if (lhr && !lhr.runtimeError) return lhr
    failure = lhr?.runtimeError ? `${lhr.runtimeError.code} ${lhr.runtimeError.message}` : 'no result'
    console.error(`lighthouse on ${path}, try ${attempt + 1}: ${failure}`)
  }
  throw new Error(`Lighthouse on ${path} failed three times: ${failure}`)
}

async function main(): Promise<void> {
  boundLifetime('lighthouse', 600_000)
  const options = JSON.parse(process.env.BENCH_LIGHTHOUSE ?? '{}') as Options
  const base = loopback(options.url)
  const profile = mkdtempSync(join(tmpdir(), 'alttext-lighthouse-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--remote-debugging-port=0',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  try {
    const signIn = await context.request.post(`${base}/api/session`, { data: { email: options.email, password: options.password }, headers: { origin: base } })
    if (signIn.status() !== 200) throw new Error(`POST /api/session answered ${signIn.status()}: ${await signIn.text()}`)
    const portFile = join(profile, 'DevToolsActivePort')
    for (let i = 0; i < 100 && !existsSync(portFile); i++) await Bun.sleep(50)
    const port = Number(readFileSync(portFile, 'utf8').split('\n')[0])
    const pages: Record<string, LighthouseRun[]> = {}
    let version = ''
    for (let run = 0; run < options.runs; run++)
      for (const path of options.paths) {
        const lhr = await audit(port, base, path)
        if (new URL(lhr.finalDisplayedUrl).pathname !== path) throw new Error(`Lighthouse on ${path} ended on ${lhr.finalDisplayedUrl} (not signed in?)`)
        version = lhr.lighthouseVersion
        const score = (id: string) => Math.round((lhr.categories[id]?.score ?? 0) * 100)
        const metric = (id: string) => lhr.audits[id]?.numericValue ?? Number.NaN
        // Audits that cost accessibility or best-practices points (the performance metrics are rows of their own).
        const misses = [lhr.categories.accessibility, lhr.categories['best-practices']]
          .filter((category) => category !== undefined)
          .flatMap((category) => category.auditRefs.filter((ref) => ref.weight > 0).map((ref) => ref.id))
          .filter((id) => (lhr.audits[id]?.score ?? 1) < 1)
          .map((id) => `${id} ${lhr.audits[id]?.displayValue ?? lhr.audits[id]?.score}`)
        pages[path] ??= []
        pages[path].push({
          performance: score('performance'),
          accessibility: score('accessibility'),
          bestPractices: score('best-practices'),
          fcpMs: metric('first-contentful-paint'),
          lcpMs: metric('largest-contentful-paint'),
          tbtMs: metric('total-blocking-time'),
          cls: metric('cumulative-layout-shift'),
          misses,
        })
      }
    const result: LighthouseResult = { lighthouse: version, chromium: context.browser()?.version() ?? 'unknown', pages }
    console.log(`BENCH_RESULT ${JSON.stringify(result)}`)
  } finally {
    await context.close()
    rmSync(profile, { recursive: true, force: true })
  }
  process.exit(0)
}

await main()
