// The test lanes (scripts/test-lanes.ts): every test file is in exactly one, each by what it uses, and the
// README's `bun run test` runs them all, in the worker processes the lanes use too.
// test lane: quick
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { type Lane, LANES, laneOf, lanes, RUN_FLAGS, testFiles } from '../../scripts/test-lanes'

const ciRun = await Bun.file(new URL('../../.ci/run', import.meta.url)).text()

describe('test lanes', () => {
  test('every test file bun test finds is in exactly one lane', () => {
    const byLane = lanes()
    const all = testFiles()
    expect(all.length).toBeGreaterThan(100)
    const placed = LANES.flatMap((lane) => byLane[lane])
    expect(placed.toSorted()).toEqual(all)
    expect(new Set(placed).size).toBe(placed.length)
  })

  test('`bun run test` is every file with the lanes’ flags; each lane has its script; test:unit is the quick lane', () => {
    expect(pkg.scripts.test).toBe(`bun test ${RUN_FLAGS.join(' ')}`)
    for (const lane of LANES) expect(pkg.scripts[`test:${lane}`]).toBe(`bun scripts/test-lanes.ts ${lane}`)
    expect(pkg.scripts['test:unit']).toBe(pkg.scripts['test:quick'])
  })

  test('CI runs the README’s command, prints each lane’s counts, and runs the PostgreSQL pass', () => {
    expect(ciRun).toMatch(/^bun run test "\$\{report\[@\]\}"/m)
    expect(ciRun).toContain('bun scripts/test-lanes.ts --summary')
    expect(ciRun).toMatch(/^ALTTEXT_TEST_ENGINE=postgres bun run test /m)
    expect(ciRun).toContain('echo "tests: ')
  })

  test('files of this checkout land where their use says', () => {
    expect(laneOf('test/docs/a11y.test.ts')).toBe('browser')
    expect(laneOf('test/console/a11y.test.ts')).toBe('browser')
    expect(laneOf('test/replicas/haproxy.test.ts')).toBe('system')
    expect(laneOf('test/store/claims.test.ts')).toBe('system')
    expect(laneOf('test/limits/redis-limiter.test.ts')).toBe('system')
    expect(laneOf('test/alt-text/text.test.ts')).toBe('quick')
    // Only the SQLite-only marker of test/support/postgres: no cluster, so quick.
    expect(laneOf('test/keys/security.test.ts')).toBe('quick')
    // Its cases name the support modules in strings; it says its lane.
    expect(laneOf('test/support/test-lanes.test.ts')).toBe('quick')
  })

  describe('the rule, on a made-up tree', () => {
    const root = mkdtempSync(join(tmpdir(), 'alttext-lanes-'))
    afterAll(() => rmSync(root, { recursive: true, force: true }))
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true })
      writeFileSync(join(root, path), text)
    }
    for (const name of ['browser', 'console', 'postgres', 'process', 'redis', 'replicas', 'store-engines', 'epub', 'service'])
      write(`test/support/${name}.ts`, '')
    write('test/a/helper.ts', "import { runCommand } from '../support/process'\n")
    write('test/a/deeper.ts', "import './helper'\n")
    const cases: [string, string, Lane][] = [
      ['in-process service', "import { startTestService } from '../support/service'", 'quick'],
      ['SQLite-only marker', "import { sqliteOnly, TEST_ENGINE } from '../support/postgres'", 'quick'],
      ['a PostgreSQL cluster', "import { type PostgresCluster, sharedPostgres } from '../support/postgres'", 'system'],
      ['Redis', "import { startRedis } from '../support/redis'", 'system'],
      ['both store engines', "import { storeEngines } from '../support/store-engines'", 'system'],
      ['a helper that runs the CLI as a process, two imports away', "import './deeper'", 'system'],
      ['a child process of its own', 'const p = Bun.spawn(["git", "status"])', 'system'],
      ['node:child_process', "import { spawnSync } from 'node:child_process'", 'system'],
      ['Chromium through the console harness', "import { consoleForFile } from '../support/console'", 'browser'],
      ['Chromium and a child process', "import { launchChromium } from '../support/browser'\nBun.spawnSync(['true'])", 'browser'],
      ['a file that says its lane', "// test lane: quick\nimport { launchChromium } from '../support/browser'", 'quick'],
    ]
    cases.forEach(([what, source, lane], index) => {
      test(`${what}: ${lane}`, () => {
        write(`test/a/case-${index}.test.ts`, `${source}\n`)
        expect(laneOf(`test/a/case-${index}.test.ts`, root)).toBe(lane)
      })
    })
  })
})
