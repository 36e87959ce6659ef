// Test lanes: each test file's lane follows from what it uses, so a new file lands in one without a list
// to keep. browser: Chromium (test/support/browser or console). system: PostgreSQL, Redis, HAProxy,
// EPUBCheck or any child process (the CLI as a process, kill -9, git, promtool). quick: everything else,
// the in-process service included. Imports are followed through the test tree's own helper modules; a
// module of test/support counts by what it is, not by what it could start (service.ts starts no
// PostgreSQL unless ALTTEXT_TEST_ENGINE=postgres asks for it). A line `// test lane: <lane>` overrides.
//
//   bun scripts/test-lanes.ts <lane> [bun test flags]   run one lane (in parallel, longest files first)
//   bun scripts/test-lanes.ts --list                    each file with its lane
//   bun scripts/test-lanes.ts --summary <junit.xml>     each lane's counts and file time from a run's report
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { Glob } from 'bun'

export const LANES = ['quick', 'browser', 'system'] as const
export type Lane = (typeof LANES)[number]

const REPO = resolve(import.meta.dir, '..')
/** What bun test itself picks up as a test file (its default name patterns), outside node_modules. */
const TEST_FILE_GLOB = '**/*{.test,_test,.spec,_spec}.{ts,tsx,js,jsx,mts,cts,mjs,cjs}'
/** The flags every run shares: the README's `bun run test` and each lane. */
export const RUN_FLAGS = ['--timeout', '30000', '--parallel=3', '--no-isolate', '--timings=test/timings.json']

/** Modules of test/support whose use puts a file in a lane; the others run in-process. */
const SUPPORT_LANES: Record<string, Lane> = {
  browser: 'browser',
  console: 'browser',
  redis: 'system',
  replicas: 'system',
  'store-engines': 'system',
  epub: 'system',
  wordpress: 'system',
}
/** test/support/postgres also gives SQLite-only markers and the engine switch: only these start a cluster. */
const POSTGRES_STARTERS = /\b(sharedPostgres|startPostgresCluster)\b/
/** test/support/process also runs commands in-process (runCli): only these start a process. */
const PROCESS_STARTERS = /\b(runCommand|spawnService|SOURCE_COMMAND)\b/
const CHILD_PROCESS = /\bBun\.spawn(Sync)?\b|['"](node:)?child_process['"]|\bspawnSync\b/
/** A file's own say, for one whose text names what it does not use (as the test of this rule does). */
const LANE_MARK = /^\/\/ test lane: (quick|browser|system)$/m
/** Static imports and re-exports (with what they name), bare imports, and dynamic imports of relative modules. */
const IMPORT = /\b(?:import|export)\s+(?:type\s+)?(?:([^'"]*?)\s*from\s*)?['"](\.[^'"]+)['"]|\bimport\s*\(\s*['"](\.[^'"]+)['"]\s*\)/g

/** Every test file bun test finds in the checkout, repository-relative and sorted. */
export function testFiles(root = REPO): string[] {
  const files = [...new Glob(TEST_FILE_GLOB).scanSync({ cwd: root })].filter((f) => !f.split('/').includes('node_modules'))
  return files.map((f) => f.replaceAll('\\', '/')).sort()
}

function resolveModule(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier)
  return [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((candidate) => existsSync(candidate) && statSync(candidate).isFile())
}

/** What a file needs, from its own text and the test-tree modules it imports. */
function needs(file: string, root: string, seen: Set<string>): Set<Lane> {
  const found = new Set<Lane>()
  if (seen.has(file)) return found
  seen.add(file)
  const source = readFileSync(file, 'utf8')
  if (/['"]playwright-core['"]/.test(source)) found.add('browser')
  if (CHILD_PROCESS.test(source)) found.add('system')
  const supportDir = join(root, 'test', 'support')
  for (const m of source.matchAll(IMPORT)) {
    const names = m[1] ?? ''
    const target = resolveModule(file, m[2] ?? m[3]!)
    if (!target) continue
    if (dirname(target) === supportDir) {
      const name = target.slice(supportDir.length + 1).replace(/\.tsx?$/, '')
      const starts = (name === 'postgres' && POSTGRES_STARTERS.test(names)) || (name === 'process' && PROCESS_STARTERS.test(names))
      const lane = SUPPORT_LANES[name] ?? (starts ? 'system' : undefined)
      if (lane) found.add(lane)
    } else if (relative(join(root, 'test'), target).startsWith('..') === false) {
      for (const lane of needs(target, root, seen)) found.add(lane)
    }
  }
  return found
}

/** A test file's lane: browser over system over quick (a page test that also spawns runs with the pages). */
export function laneOf(file: string, root = REPO): Lane {
  const marked = LANE_MARK.exec(readFileSync(resolve(root, file), 'utf8'))?.[1]
  if (marked) return marked as Lane
  const found = needs(resolve(root, file), root, new Set())
  return found.has('browser') ? 'browser' : found.has('system') ? 'system' : 'quick'
}

export function lanes(root = REPO): Record<Lane, string[]> {
  const byLane: Record<Lane, string[]> = { quick: [], browser: [], system: [] }
  for (const file of testFiles(root)) byLane[laneOf(file, root)].push(file)
  return byLane
}

/** Per-file results of a JUnit report bun test wrote: the outermost <testsuite> of each file. */
function junitFiles(xml: string): { file: string; tests: number; failures: number; skipped: number; time: number }[] {
  const attr = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1] ?? ''
  return [...xml.matchAll(/^ {2}<testsuite\b[^>]*>/gm)].map(([tag]) => ({
    file: attr(tag, 'file'),
    tests: Number(attr(tag, 'tests')),
    failures: Number(attr(tag, 'failures')),
    skipped: Number(attr(tag, 'skipped')),
    time: Number(attr(tag, 'time')),
  }))
}

function summary(report: string): string[] {
  const byLane = lanes()
  const results = junitFiles(readFileSync(report, 'utf8'))
  return LANES.map((lane) => {
    const files = new Set(byLane[lane])
    const mine = results.filter((r) => files.has(r.file))
    const sum = (key: 'tests' | 'failures' | 'skipped' | 'time') => mine.reduce((total, r) => total + r[key], 0)
    const passed = sum('tests') - sum('failures') - sum('skipped')
    return `lane ${lane}: ${mine.length} of ${files.size} files, ${passed} passed, ${sum('failures')} failed, ${sum('skipped')} skipped, ${Math.round(sum('time'))} s of file time`
  })
}

if (import.meta.main) {
  const [first, ...rest] = process.argv.slice(2)
  if (first === '--list') {
    for (const [lane, files] of Object.entries(lanes())) for (const file of files) console.log(`${lane}\t${file}`)
  } else if (first === '--summary' && rest[0]) {
    for (const line of summary(rest[0])) console.log(line)
  } else if (LANES.includes(first as Lane)) {
    const files = lanes()[first as Lane].map((f) => `./${f}`)
    const run = Bun.spawnSync([process.execPath, 'test', ...RUN_FLAGS, ...rest, ...files], { cwd: REPO, stdio: ['inherit', 'inherit', 'inherit'] })
    process.exitCode = run.exitCode ?? 1
  } else {
    console.error(`usage: bun scripts/test-lanes.ts <${LANES.join('|')}> [bun test flags] | --list | --summary <junit.xml>`)
    process.exitCode = 2
  }
}
