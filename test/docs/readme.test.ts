// What the README tells a newcomer to run and to expect must be true of this checkout: the no-Bun lines
// cover every command of the "with Bun" path that needs Bun (start, test, build) with the pinned Bun,
// and the start-up log example has the fields the service's start-up lines have.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import pkg from '../../package.json' with { type: 'json' }
import { startTestService, type TestService, waitUntil } from '../support/service'

const readme = await Bun.file(new URL('../../README.md', import.meta.url)).text()
const NOT_READY = 'the model server is not ready: alt-text requests will fail until it is'

let service: TestService
beforeAll(async () => {
  service = await startTestService()
})
afterAll(async () => {
  await service.stop()
})

/** The README's text between two markers. */
function between(start: string, end: string): string {
  const from = readme.indexOf(start)
  const to = readme.indexOf(end, from)
  if (from === -1 || to === -1) throw new Error(`README has no section from "${start}" to "${end}"`)
  return readme.slice(from, to)
}

/** The README's example log line with this message, parsed. */
function exampleLine(msg: string): Record<string, unknown> {
  const line = readme.split('\n').find((l) => l.startsWith('{') && l.includes(`"msg":${JSON.stringify(msg)}`))
  if (!line) throw new Error(`README shows no log line with msg "${msg}"`)
  return JSON.parse(line)
}

describe('README', () => {
  test('stays under 20,000 bytes (the details live in docs/)', () => {
    expect(Buffer.byteLength(readme)).toBeLessThan(20_000)
  })

  test('without Bun: one npx line each to start, test and build, with the Bun package.json pins', () => {
    const pinned = pkg.packageManager.replace(/^bun@/, '')
    const noBun = between('**On a fresh machine with Node.js and npm, but no Bun**', '**With Bun')
    const lines = noBun.split('\n').filter((l) => l.startsWith('npx '))
    const scripts = lines.map((line) => /npx -y bun@[\d.]+ run (\S+)\s*$/.exec(line)?.[1])
    expect(scripts.toSorted()).toEqual(['build', 'start', 'test'])
    for (const line of lines) {
      expect([...line.matchAll(/npx -y bun@([\d.]+)/g)].map((m) => m[1])).toEqual([pinned, pinned])
      expect(line).toContain(`npx -y bun@${pinned} install --frozen-lockfile && `)
    }
    for (const script of scripts) expect(pkg.scripts).toHaveProperty(script as string)
  })

  test('the start-up log example has exactly the fields of the service’s start-up lines', async () => {
    await waitUntil(() => service.logs.some((l) => l.msg === NOT_READY), 'the "not ready" warning')
    for (const msg of ['listening', NOT_READY]) {
      const logged = service.logs.find((l) => l.msg === msg)!
      const shown = exampleLine(msg)
      expect(Object.keys(shown)).toEqual(Object.keys(logged))
      expect(shown.level).toBe(logged.level)
    }
  })
})
