// Scenario 8: a hostile GIF. A malformed ~477-byte GIF whose LZW stream used to keep the GIF decoder
// busy until its 10 s timeout must be refused within 1 s: the wall time of POST /api/alt-text for it, a
// few tries one after another on a fresh service, as a client sees it. The bytes come from
// `hostileGif()` in test/support/images.ts (written by the intake's owner); without that export the
// scenario is skipped and says so.
import { join } from 'node:path'
import { type Account, anomalies, errorMessage, type Fixtures, log, loopback, QUICK, serviceEnv } from '../lib/common'
import { startService } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, median } from '../lib/stats'

export const HOSTILE = { tries: QUICK ? 3 : 5, limitMs: 1000, timeoutMs: 30_000, path: '/hostile.gif' }
const SCENARIO = '8 hostile GIF'

export type HostileTry = { ms: number; status: number; code?: string; error?: string }
export type HostileResult = { skipped: string } | { bytes: number; tries: HostileTry[]; aliveAfter: boolean }

/** The hostile GIF's bytes, or why there are none. */
export async function loadHostileGif(): Promise<Uint8Array | string> {
  try {
    const support = (await import('../../../test/support/images')) as Record<string, unknown>
    const make = support.hostileGif
    if (typeof make !== 'function') return 'test/support/images.ts has no hostileGif() export yet'
    const bytes: unknown = await make()
    if (!(bytes instanceof Uint8Array)) return 'hostileGif() did not return a Uint8Array'
    return bytes
  } catch (error) {
    return `hostileGif() failed: ${errorMessage(error)}`
  }
}

export async function measureHostileGif(fx: Fixtures, dbPath: string, account: Account, bytes: number): Promise<HostileResult> {
  log(`scenario 8 (hostile GIF): ${bytes} bytes, ${HOSTILE.tries} tries one after another, fresh service`)
  const service = await startService(fx.binary, serviceEnv(fx, dbPath, fx.ollamaFast), join(fx.logDir, 'hostile-gif.log'))
  const tries: HostileTry[] = []
  try {
    await Bun.sleep(500)
    for (let i = 0; i < HOSTILE.tries; i++) {
      const started = performance.now()
      try {
        const response = await fetch(loopback(`${service.url}/api/alt-text`), {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': account.apiKey },
          body: JSON.stringify({ image_url: loopback(fx.imageOrigin + HOSTILE.path), context: `hostile-${i}` }),
          signal: AbortSignal.timeout(HOSTILE.timeoutMs),
        })
        const text = await response.text()
        const ms = performance.now() - started
        let code: string | undefined
        try {
          const body = JSON.parse(text) as { error?: { code?: string } | string }
          if (typeof body.error === 'object') code = body.error?.code
        } catch {
          // not JSON
        }
        tries.push({ ms, status: response.status, ...(code ? { code } : {}) })
      } catch (error) {
        tries.push({ ms: performance.now() - started, status: 0, error: errorMessage(error) })
      }
      const t = tries.at(-1)!
      log(`hostile GIF try ${i + 1}: ${t.status}${t.code ? ` ${t.code}` : ''} in ${t.ms.toFixed(0)} ms${t.error ? ` (${t.error})` : ''}`)
    }
    const aliveAfter =
      service.alive() &&
      (await fetch(`${service.url}/health`, { signal: AbortSignal.timeout(5000) }).then(
        (r) => r.status === 200,
        () => false,
      ))
    if (!aliveAfter) anomalies.push('hostile GIF: the service did not answer /health afterwards')
    return { bytes, tries, aliveAfter }
  } finally {
    await service.stop()
  }
}

export function hostileRows(result: HostileResult): Row[] {
  if ('skipped' in result)
    return [{ scenario: SCENARIO, figure: `skipped: ${result.skipped}`, unit: 'ms', value: figure([]), target: `≤ ${HOSTILE.limitMs} ms`, met: null }]
  const ms = result.tries.map((t) => t.ms)
  const refused = result.tries.filter((t) => t.status >= 400 && t.status < 500).length
  const p50 = median(ms)
  const max = Math.max(...ms)
  const rows: Row[] = [
    { scenario: SCENARIO, figure: 'size of the GIF (from hostileGif())', unit: 'bytes', value: figure([result.bytes]), met: null },
    { scenario: SCENARIO, figure: 'tries, one after another', unit: 'count', value: figure([ms.length]), met: null },
    {
      scenario: SCENARIO,
      figure: 'wall time of the request, p50 over the tries',
      unit: 'ms',
      value: figure(ms),
      target: `refused, ≤ ${HOSTILE.limitMs} ms`,
      met: refused === ms.length && p50 <= HOSTILE.limitMs,
    },
    {
      scenario: SCENARIO,
      figure: 'wall time of the request, slowest try',
      unit: 'ms',
      value: figure([max]),
      target: `≤ ${HOSTILE.limitMs} ms`,
      met: max <= HOSTILE.limitMs,
    },
  ]
  const counts: Record<string, number> = {}
  for (const t of result.tries) {
    const key = t.code ? `${t.status} ${t.code}` : String(t.status)
    counts[key] = (counts[key] ?? 0) + 1
  }
  for (const [key, count] of Object.entries(counts))
    rows.push({
      scenario: SCENARIO,
      figure: `answered ${key}${key.startsWith('0') ? ' (no answer: client timeout or reset)' : ''}`,
      unit: 'count',
      value: figure([count]),
      met: null,
    })
  rows.push({
    scenario: SCENARIO,
    figure: 'service answers /health afterwards',
    unit: 'count',
    value: figure([result.aliveAfter ? 1 : 0]),
    target: '1',
    met: result.aliveAfter,
  })
  return rows
}
