// The one definition of how the binary is built: its entry points, the flags of `bun build --compile`
// and what `alttext --version` gets baked in. `bun run build` (this file) builds for the machine it runs
// on, from the checkout's node_modules; `bun run release` (scripts/release.ts) builds the five release
// targets with the same flags.
//
//   bun scripts/build.ts [--outfile dist/alttext]
import { join, resolve } from 'node:path'

export const ROOT = resolve(import.meta.dir, '..')
/** The binary's entry points: the program and the workers it starts (Bun embeds each as its own module). */
export const ENTRIES = ['src/main.ts', 'src/intake/gif-worker.ts', 'src/intake/fetch-worker.ts', 'src/ocr/ocr-worker.ts']

/**
 * Modules left out of the binary: playwright-core (audit --render) can speak WebDriver BiDi through
 * chromium-bidi, which it does not ship and which --render never loads (it speaks CDP).
 */
export const EXTERNALS = ['chromium-bidi/*']

/** What a build bakes in for `alttext --version` (src/version.ts). */
export type Stamp = { commit: string; date: string }

/** The checkout's commit (12 hex digits, as --version prints it from source) and now, to the second. */
export function stampNow(root = ROOT): Stamp {
  const git = Bun.spawnSync(['git', 'rev-parse', '--short=12', 'HEAD'], { cwd: root, stdout: 'pipe', stderr: 'ignore' })
  const commit = git.exitCode === 0 ? git.stdout.toString().trim() : ''
  return { commit: /^[0-9a-f]{7,40}$/.test(commit) ? commit : 'unknown', date: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') }
}

/**
 * The flags of every build after `bun build ENTRIES`: a minified single binary with the stamp defined as
 * string constants. `--production`: without it `bun build` resolves packages' "development" export
 * condition, and the binary got micromark's checked build (`alttext audit` spent ~40 % more CPU on Markdown).
 */
export function buildFlags(stamp: Stamp): string[] {
  return [
    '--compile',
    '--minify',
    '--production',
    ...EXTERNALS.flatMap((name) => ['--external', name]),
    '--define',
    `__ALTTEXT_COMMIT__=${JSON.stringify(stamp.commit)}`,
    '--define',
    `__ALTTEXT_BUILD_DATE__=${JSON.stringify(stamp.date)}`,
  ]
}

export type Compile = {
  /** The folder with package.json, src/ and the node_modules whose native packages get embedded. */
  root: string
  outfile: string
  stamp: Stamp
  /** Bun's cross-compile target (`bun-darwin-arm64`); none builds for this machine. */
  target?: string
  metafile?: string
}

/** Runs `bun build --compile`; throws with bun's output when it fails. */
export function compile({ root, outfile, stamp, target, metafile }: Compile): void {
  const args = [process.execPath, 'build', ...ENTRIES, ...buildFlags(stamp)]
  if (target) args.push(`--target=${target}`)
  if (metafile) args.push(`--metafile=${metafile}`)
  args.push('--outfile', outfile)
  const run = Bun.spawnSync(args, { cwd: root, stdout: 'pipe', stderr: 'pipe' })
  if (run.exitCode !== 0) throw new Error(`bun build failed for ${target ?? 'this machine'}:\n${run.stdout.toString()}${run.stderr.toString()}`)
}

if (import.meta.main) {
  const at = process.argv.indexOf('--outfile')
  const outfile = resolve(at > 0 && process.argv[at + 1] ? process.argv[at + 1]! : join(ROOT, 'dist', 'alttext'))
  compile({ root: ROOT, outfile, stamp: stampNow() })
  console.log(`built ${outfile}`)
}
