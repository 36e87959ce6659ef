// The GitHub Action's entry script, run by node as a runner would, against a release server on loopback:
// the binary is run only when its SHA-256 matches SHA256SUMS; its exit code is the gate. The action's
// metadata and the workflows pass @action-validator.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inputVariables, sha256 as sha, startReleaseServer } from './release-server'

// Plain JavaScript for the runner's node, without types: imported by path.
const entryModule = '../../action/entry.mjs'
const { assetName, expectedDigest } = (await import(entryModule)) as {
  assetName: (version: string, platform?: string, arch?: string) => string
  expectedDigest: (sums: string, name: string) => string | undefined
}

const VERSION = '9.8.7'
const NAME = assetName(VERSION)
// A stand-in for alttext: records its arguments, writes the SARIF file it was asked for, exits with $CODE.
const BINARY = `#!/bin/sh
printf '%s\\n' "$@" > "$RUNNER_TEMP/args"
while [ $# -gt 0 ]; do [ "$1" = --sarif ] && echo '{"version":"2.1.0","runs":[]}' > "$2"; shift; done
exit "\${CODE:-0}"
`
let release: ReturnType<typeof startReleaseServer>
let dir: string

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'alttext-action-'))
  release = startReleaseServer(VERSION, NAME, BINARY)
  release.state.sums += `${sha('other')}  alttext-${VERSION}-windows-x64.exe\n`
})
afterAll(() => {
  release?.stop()
  rmSync(dir, { recursive: true, force: true })
})

// Spawned asynchronously: the release server answers from this process's event loop.
async function runAction(inputs: Record<string, string>, env: Record<string, string> = {}) {
  const runnerTemp = mkdtempSync(join(dir, 'run-'))
  const output = join(runnerTemp, 'github-output')
  writeFileSync(output, '')
  const run = Bun.spawn(['node', 'action/entry.mjs'], {
    env: {
      PATH: process.env.PATH ?? '',
      RUNNER_TEMP: runnerTemp,
      GITHUB_OUTPUT: output,
      INPUT_RELEASE_URL: release.url,
      INPUT_VERSION: VERSION,
      INPUT_PATHS: 'site/ docs/guide.md',
      INPUT_SARIF: join(runnerTemp, 'alttext.sarif'),
      ...inputVariables(inputs),
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [code, stdout, stderr] = await Promise.all([run.exited, new Response(run.stdout).text(), new Response(run.stderr).text()])
  const args = (() => {
    try {
      return readFileSync(join(runnerTemp, 'args'), 'utf8').trim().split('\n')
    } catch {
      return null
    }
  })()
  return { code, out: stdout + stderr, args, output: readFileSync(output, 'utf8'), runnerTemp }
}

describe('the Action: happy', () => {
  test('names the asset per platform', () => {
    expect(assetName('1.2.3', 'linux', 'x64')).toBe('alttext-1.2.3-linux-x64')
    expect(assetName('1.2.3', 'darwin', 'arm64')).toBe('alttext-1.2.3-darwin-arm64')
    expect(assetName('1.2.3', 'win32', 'x64')).toBe('alttext-1.2.3-windows-x64.exe')
    expect(() => assetName('1.2.3', 'freebsd', 'x64')).toThrow('no release binary for freebsd-x64')
    expect(expectedDigest(`${'a'.repeat(64)} *${NAME}\n`, NAME)).toBe('a'.repeat(64))
  })

  test('downloads, checks the SHA-256, and runs audit --check with SARIF over the paths', async () => {
    const run = await runAction({})
    expect(run.code).toBe(0)
    expect(run.out).toContain(`SHA-256 ${sha(BINARY)} matches SHA256SUMS`)
    expect(run.args).toEqual(['audit', '--check', '--sarif', join(run.runnerTemp, 'alttext.sarif'), 'site/', 'docs/guide.md'])
    expect(run.output).toContain(`sarif=${join(run.runnerTemp, 'alttext.sarif')}`)
    expect(JSON.parse(readFileSync(join(run.runnerTemp, 'alttext.sarif'), 'utf8')).version).toBe('2.1.0')
  })

  test('exclude (one glob per line) and baseline become --exclude and --baseline arguments, as given', async () => {
    const run = await runAction({ exclude: 'vendor/**\n\n  docs/old/*.md $(rm -rf /)  \n', baseline: '.alttext-baseline.json' })
    expect(run.code).toBe(0)
    expect(run.args).toEqual([
      'audit',
      '--check',
      '--sarif',
      join(run.runnerTemp, 'alttext.sarif'),
      '--exclude',
      'vendor/**',
      '--exclude',
      'docs/old/*.md $(rm -rf /)',
      '--baseline',
      '.alttext-baseline.json',
      'site/',
      'docs/guide.md',
    ])
  })

  test('images that need work: exit 1, an error annotation, the SARIF still written', async () => {
    const run = await runAction({}, { CODE: '1' })
    expect(run.code).toBe(1)
    expect(run.out).toContain('::error::Some images need alt text')
    expect(run.output).toContain('sarif=')
  })
})

describe('the Action: errors', () => {
  test('a missing release or version: a clear error, nothing run', async () => {
    const missing = await runAction({ version: '0.0.1' })
    expect(missing.code).toBe(2)
    expect(missing.out).toContain('::error::could not download alttext 0.0.1')
    expect(missing.args).toBeNull()
    const bad = await runAction({ version: 'latest; rm -rf /' })
    expect(bad.out).toContain('::error::version must be a release version')
    expect((await runAction({ paths: ' ' })).out).toContain('::error::paths is empty')
  })
})

describe('the Action: security', () => {
  test('a binary that does not match SHA256SUMS is never run', async () => {
    const good = release.state.sums
    release.state.sums = `${sha('tampered')}  ${NAME}\n`
    try {
      const run = await runAction({})
      expect(run.code).toBe(2)
      expect(run.out).toContain(`::error::${NAME} does not match SHA256SUMS`)
      expect(run.args).toBeNull()
      release.state.sums = `${sha(BINARY)}  alttext-${VERSION}-darwin-arm64\n`
      const unlisted = await runAction({})
      expect(unlisted.out).toContain(`has no line for ${NAME}: not running an unchecked binary`)
      expect(unlisted.args).toBeNull()
    } finally {
      release.state.sums = good
    }
  })

  test('action.yml and every workflow pass @action-validator', () => {
    const files = ['action.yml', ...readdirSync('.github/workflows').map((f) => `.github/workflows/${f}`)]
    for (const file of files) {
      const run = Bun.spawnSync(['node_modules/.bin/action-validator', file], { stdout: 'pipe', stderr: 'pipe' })
      expect({ file, code: run.exitCode, out: run.stdout.toString() + run.stderr.toString() }).toEqual({ file, code: 0, out: '' })
    }
  })
})
