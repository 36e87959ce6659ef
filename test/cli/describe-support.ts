// Helpers of the `alttext describe` tests: fixture folders of distinct images (distinct bytes, so no
// answer comes from another test's cache), the command run in-process (and as the binary, to kill it), and an account's credit count.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Subprocess } from 'bun'
import { makeJpeg, makePng, truncate } from '../support/images'
import { runCli, SOURCE_COMMAND } from '../support/process'
import type { Api } from '../support/service'

let size = 20 + (process.pid % 400)

/** A PNG (or JPEG) no other test has made: its width is new. */
export const uniqueImage = (kind: 'png' | 'jpeg' = 'png') => (kind === 'png' ? makePng(++size, 17) : makeJpeg(++size, 19))

/** A corrupt image: the service answers 400 invalid_image. */
export const corruptImage = () => truncate(makePng(++size, 300), 0.3)

/** Writes files (relative path -> bytes or text) into a fresh temporary folder and returns it. */
export function fixtureDir(files: Record<string, Uint8Array | string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'alttext-describe-'))
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), content)
  }
  return dir
}

/** A folder of `count` distinct PNGs named img-000.png ... */
export function imageDir(count: number): string {
  return fixtureDir(Object.fromEntries(Array.from({ length: count }, (_, i) => [`img-${String(i).padStart(3, '0')}.png`, uniqueImage()])))
}

/** Runs `alttext describe` with the service's URL and key in the environment, in `cwd`. */
export const describeCommand = (args: string[], env: Record<string, string>, cwd: string) => runCli(['describe', ...args], env, { cwd })

/** Starts `alttext describe` without waiting for it (to kill it mid-run). */
export function spawnDescribe(args: string[], env: Record<string, string>, cwd: string): Subprocess<'ignore', 'pipe', 'pipe'> {
  return Bun.spawn([...SOURCE_COMMAND, 'describe', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
}

/** Credits the account has used this period. */
export async function creditsUsed(api: Api, key: string): Promise<number> {
  const usage = await api.get('/api/usage', key)
  return usage.body.credits.used
}

export const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, any>)
