// The HTTP stack's requests/s against a bare Elysia app is a regression guard of the benchmark, not a
// target: the bench judges each endpoint against HTTP_GUARD and prints PASS or FAIL, and the docs state
// the same guard.
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type Baselines, HTTP_GUARD, httpGuardVerdicts, httpRows, type ServiceRuns } from '../../scripts/bench/scenarios/http-intake'

const REPO = join(import.meta.dir, '..', '..')
const text = (path: string) => Bun.file(join(REPO, path)).text()

/** One round of the service at `usage`× and `validate`× the bare app's 10 000 requests/s. */
function oneRound(usage: number, validate: number): { svc: ServiceRuns; base: Baselines } {
  const round = (rps: number) => ({ rps, p50: 1, p99: 2, cpuUsPerRequest: 50, errors: 0, requests: rps * 3, logBytesPerRequest: 200 })
  return {
    svc: { label: 'small db', usage: [round(10_000 * usage)], validate: [round(10_000 * validate)], intake: {} },
    base: { bareGet: [round(10_000)], barePost: [round(10_000)], dutiesGet: [], dutiesPost: [], floor: {} },
  }
}

describe('the HTTP regression guard', () => {
  test('is 0.8× the ratios of the run that retired the target', () => {
    expect(HTTP_GUARD).toEqual({ factor: 0.8, ratios: { 'GET /api/usage': 0.23, 'POST /api/validate-key': 0.41 } })
  })

  test('a ratio at or above the guard passes, one below it fails, each endpoint on its own', () => {
    const { svc, base } = oneRound(0.19, 0.3) // guards: 0.184 and 0.328
    const rows = httpRows(svc, base).filter((row) => row.target !== undefined)
    expect(rows.map((row) => [row.figure, row.met])).toEqual([
      ['GET /api/usage: requests/s at 64 connections', true],
      ['POST /api/validate-key: requests/s at 64 connections', false],
    ])
    expect(httpGuardVerdicts(httpRows(svc, base))).toEqual([
      'HTTP regression guard, GET /api/usage: 0.19× bare Elysia, guard ≥ 0.18×: PASS',
      'HTTP regression guard, POST /api/validate-key: 0.30× bare Elysia, guard ≥ 0.33×: FAIL',
    ])
  })

  test('docs/benchmarks.md and the README state the same guard, and no 0.5× target', async () => {
    const benchmarks = await text('docs/benchmarks.md')
    const readme = await text('README.md')
    // The README's performance lines, as one line of words.
    const performance = readme.slice(readme.indexOf('## Performance'), readme.indexOf('## Dependencies')).replace(/\s+/g, ' ')
    for (const [endpoint, ratio] of Object.entries(HTTP_GUARD.ratios)) {
      const guard = (HTTP_GUARD.factor * ratio).toFixed(2)
      expect(benchmarks).toMatch(
        new RegExp(`\`${endpoint}\` requests/s vs a bare Elysia app[^|]*\\| regression guard: ≥ ${guard}× \\(${HTTP_GUARD.factor} × ${ratio}×\\) \\|`),
      )
      expect(performance).toContain(`${ratio}×`)
    }
    expect(performance).toContain(`regression guard (≥ ${HTTP_GUARD.factor}× these)`)
    expect(performance).not.toContain('target 0.5×')
  })
})
