// What every scenario of `run.ts` shares: the run's mode (full or quick), its log, the fixtures, and
// the few public HTTP calls the bench makes to set a service up (register, read a response).
import { join } from 'node:path'
import type { BenchImages } from './images'

export const BENCH_DIR = join(import.meta.dir, '..')
export const REPO = join(BENCH_DIR, '..', '..')
export const BUN = process.execPath

/** `--quick` or BENCH_QUICK=1: fewer rounds and shorter runs, to try the scripts out (figures are noise). */
export const QUICK = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1'
/** Rounds per figure (BENCH_ROUNDS overrides): 3 in a full run, 1 in a quick one (no spread then). */
export const ROUNDS = Math.min(10, Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3))) || 1))

const startedAt = performance.now()
export const elapsedSeconds = () => (performance.now() - startedAt) / 1000
export const log = (message: string) => console.error(`[${elapsedSeconds().toFixed(0).padStart(3)}s] ${message}`)
export const MiB = 1024 * 1024

/** Anything that makes a figure doubtful (errors, a hit where a miss was meant...): printed under the table. */
export const anomalies: string[] = []

export type Fixtures = {
  dir: string
  logDir: string
  images: BenchImages
  imageOrigin: string
  caPath: string
  ollamaFast: string
  ollamaSlow: string
  wrk: string
  binary: string
}

export type Account = { apiKey: string }

/** The bench talks to loopback only: the URLs it hands to wrk and to its clients pass through here. */
export function loopback(url: string): string {
  const host = new URL(url).hostname
  if (host !== '127.0.0.1' && host !== '[::1]' && host !== 'localhost') throw new Error(`bench: refusing a non-loopback URL ${url}`)
  return url
}

export function serviceEnv(fx: Fixtures, dbPath: string, ollama: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ALTTEXT_DB: dbPath,
    OLLAMA_HOST: ollama,
    ALTTEXT_RATE_LIMITS: 'off',
    ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
    NODE_EXTRA_CA_CERTS: fx.caPath,
    // The floors (lib/floor.ts, upload-floor.ts) prepare images at 1024 px; the model's own side would differ.
    ALTTEXT_IMAGE_MAX_SIDE: '1024',
    ALTTEXT_FREE_CREDITS: '10000000',
    ...extra,
  }
}

export async function register(serviceUrl: string, email = 'bench@example.com'): Promise<Account> {
  const response = await fetch(loopback(`${serviceUrl}/api/register`), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery staple' }),
    signal: AbortSignal.timeout(15_000),
  })
  if (response.status !== 201) throw new Error(`register answered ${response.status}: ${await response.text()}`)
  const body = (await response.json()) as { api_key: string }
  return { apiKey: body.api_key }
}

/** Each round measures the services in a different order, so neither always runs first. */
export const inRoundOrder = <T>(items: T[], round: number): T[] => (round % 2 === 0 ? items : [...items].reverse())

export const statusCounts = (statuses: number[]): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1
  return counts
}

export const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error))
