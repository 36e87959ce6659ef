// docs/design.md's "Layout" block must describe this checkout: every path it names exists, and every
// folder of src/, src/modules/ and src/store/ is named, so a folder added, moved or removed shows up here.
// The two store engines are laid out alike, and the contract holds no engine code. And what .gitignore
// keeps out (the benchmark's per-run results) is not committed anyway.
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const REPO = join(import.meta.dir, '..', '..')
const design = await Bun.file(join(REPO, 'docs', 'design.md')).text()

/** The fenced block right under "## Layout". */
function layoutBlock(): string[] {
  const match = /^## Layout\n+```\n([\s\S]*?)\n```/m.exec(design)
  if (!match) throw new Error('docs/design.md has no fenced block under "## Layout"')
  return match[1]!.split('\n')
}

/**
 * The paths the block names: the first word of each line that looks like a file or folder (`name/`,
 * `name.ts`), under the folder of the nearest less-indented line above it (two spaces a level). Lines
 * whose first word is not a path continue the description above them.
 */
function namedPaths(lines: string[]): string[] {
  const parents: { indent: number; path: string }[] = []
  const paths: string[] = []
  for (const line of lines) {
    const indent = line.length - line.trimStart().length
    const word = line.trim().split(/\s+/)[0] ?? ''
    if (!/^[\w.<>-]+(\/[\w.<>-]+)*(\/|\.[a-z]+)$/.test(word)) continue
    while (parents.length > 0 && parents.at(-1)!.indent >= indent) parents.pop()
    const path = (parents.at(-1)?.path ?? '') + word
    paths.push(path)
    if (word.endsWith('/')) parents.push({ indent, path })
  }
  return paths
}

const folders = (dir: string) =>
  readdirSync(join(REPO, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${dir}/${entry.name}/`)

describe('docs/design.md, Layout', () => {
  const paths = namedPaths(layoutBlock())

  test('names paths at all (the block was parsed)', () => {
    expect(paths).toContain('src/')
    expect(paths.length).toBeGreaterThan(10)
  })

  test('every path it names exists (a <placeholder> stands for any one folder)', () => {
    const missing = paths.filter((path) => {
      if (!path.includes('<')) return !existsSync(join(REPO, path))
      const [before] = path.split('<')
      return folders(before!.replace(/\/$/, '')).length === 0
    })
    expect(missing).toEqual([])
  })

  test('every folder of src/, src/cli/, src/modules/ and src/store/ is named', () => {
    const unnamed = [...folders('src'), ...folders('src/cli'), ...folders('src/modules'), ...folders('src/store')].filter((folder) => !paths.includes(folder))
    expect(unnamed).toEqual([])
  })

  test("the store's two engines hold the same files, but for those the block names as one engine's own", () => {
    const own = paths.filter((path) => /^src\/store\/(sqlite|postgres)\/[\w-]+\.ts$/.test(path)).map((path) => path.split('/').at(-1)!)
    const files = (engine: string) =>
      readdirSync(join(REPO, 'src', 'store', engine))
        .filter((name) => name.endsWith('.ts') && !own.includes(name))
        .toSorted()
    expect(own.length).toBeGreaterThan(0)
    expect(files('sqlite')).toEqual(files('postgres'))
  })

  test('the contract imports nothing but itself: no engine code', () => {
    const dir = join(REPO, 'src', 'store', 'contract')
    const outside = readdirSync(dir)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) => [...readFileSync(join(dir, name), 'utf8').matchAll(/^import [^'"]*['"]([^'"]+)['"]/gm)].map((m) => `${name}: ${m[1]}`))
    expect(outside.filter((line) => !/: \.\/[\w-]+$/.test(line))).toEqual([])
  })
})

describe('docs/design.md, the files it names', () => {
  // A path in backticks starts at the repository (`src/…`, `test/…`, `scripts/…`) or, as the prose shortens
  // it, at src/ (`store/postgres/clock.ts`); an import specifier (`test/support/process`) names its .ts file.
  const ROOTS = new Set(['src', 'test', 'scripts', 'patches', '.ci'])
  const srcFolders = new Set(folders('src').map((folder) => folder.slice('src/'.length, -1)))
  const named = [...design.matchAll(/`([\w.@-]+(?:\/[\w.@-]+)+\/?)`/g)]
    .map((match) => match[1]!)
    .flatMap((path) => {
      const first = path.split('/')[0]!
      if (ROOTS.has(first)) return [path]
      return srcFolders.has(first) ? [`src/${path}`] : []
    })

  test('names source files at all (the prose was read)', () => {
    expect(named).toContain('src/intake/codec.ts')
  })

  test('every file and folder it names exists', () => {
    const missing = named.filter((path) => !existsSync(join(REPO, path)) && !existsSync(join(REPO, `${path}.ts`)))
    expect(missing).toEqual([])
  })
})

describe('the repository', () => {
  // Without git (a source archive) there is nothing committed to compare with .gitignore.
  test.if(existsSync(join(REPO, '.git')))('commits no file that .gitignore ignores (bench results are kept locally)', () => {
    const listed = Bun.spawnSync(['git', 'ls-files', '--ignored', '--cached', '--exclude-standard'], { cwd: REPO })
    expect(listed.exitCode).toBe(0)
    expect(listed.stdout.toString().split('\n').filter(Boolean)).toEqual([])
  })
})
