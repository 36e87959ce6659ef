// The service ships as one `bun build --compile` binary, and GIF decoding runs in a Worker:
// this builds a binary with the production layout (an entry at src/main.ts plus
// src/intake/gif-worker.ts as the extra entrypoint), runs it from another directory, and
// checks that it decodes a GIF (and an SVG and an AVIF) there, and that a build without the worker says
// what is missing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { makeAnimatedGif, makeAvif, makeWebp } from '../support/images.ts'

const projectRoot = resolve(import.meta.dir, '../..')

// What the binary does: prepare the image file named on the command line, print the result.
const ENTRY_SOURCE = `
import { readFileSync } from 'node:fs'
import { createImageIntake } from './intake/index.ts'
import { inspectImage } from './intake/image-format.ts'
const [path] = process.argv.slice(2)
const bytes = new Uint8Array(readFileSync(path!))
const intake = createImageIntake({ allowPrivateHosts: [], maxSide: 100 })
const { format, width, height } = inspectImage(bytes)
const prepared = await intake.prepare({ bytes, contentHash: '', format, width, height, finalUrl: '' })
console.log(JSON.stringify({ mime: prepared.mime, width: prepared.width, height: prepared.height }))
`

let workDir: string
let otherDir: string

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'alttext-compile-'))
  otherDir = await mkdtemp(join(tmpdir(), 'alttext-elsewhere-'))
  await mkdir(join(workDir, 'src'))
  await cp(join(projectRoot, 'src/intake'), join(workDir, 'src/intake'), { recursive: true })
  await cp(join(projectRoot, 'src/shared'), join(workDir, 'src/shared'), { recursive: true })
  await cp(join(projectRoot, 'src/version.ts'), join(workDir, 'src/version.ts'))
  await cp(join(projectRoot, 'package.json'), join(workDir, 'package.json'))
  await symlink(join(projectRoot, 'node_modules'), join(workDir, 'node_modules'))
  await writeFile(join(workDir, 'src/main.ts'), ENTRY_SOURCE)
  await writeFile(join(otherDir, 'frames.gif'), makeAnimatedGif(400, 200))
  await writeFile(join(otherDir, 'still.webp'), makeWebp(300, 150))
  await writeFile(join(otherDir, 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 20"><rect width="40" height="20" fill="#036"/></svg>')
  await writeFile(join(otherDir, 'photo.avif'), await makeAvif(300, 150))
})

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true })
  await rm(otherDir, { recursive: true, force: true })
})

async function run(command: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn(command, { cwd, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, NO_COLOR: '1' } })
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { code, stdout, stderr }
}

async function build(entrypoints: string[], outfile: string): Promise<string> {
  const binary = join(workDir, 'dist', outfile)
  const result = await run([process.execPath, 'build', ...entrypoints, '--compile', '--minify', '--target=bun', '--outfile', binary], workDir)
  expect(result.stderr).not.toContain('error')
  expect(result.code).toBe(0)
  return binary
}

describe('bun build --compile', () => {
  test('with the worker as an extra entrypoint, the binary decodes a GIF from any directory', async () => {
    const binary = await build(['src/main.ts', 'src/intake/gif-worker.ts'], 'with-worker')
    const gif = await run([binary, 'frames.gif', 'gif'], otherDir)
    expect(gif.stderr).toBe('')
    expect(JSON.parse(gif.stdout)).toEqual({ mime: 'image/png', width: 100, height: 50 })
    // @napi-rs/image's native addon is embedded too.
    const webp = await run([binary, 'still.webp', 'webp'], otherDir)
    expect(JSON.parse(webp.stdout)).toEqual({ mime: 'image/png', width: 100, height: 50 })
    // librsvg and libheif come inside the embedded libvips; the SVG cleaner's parser is bundled.
    for (const file of ['logo.svg', 'photo.avif']) {
      const result = await run([binary, file], otherDir)
      expect(result.stderr).toBe('')
      expect(JSON.parse(result.stdout)).toEqual({ mime: 'image/png', width: 100, height: 50 })
    }
  })

  test('without it, a GIF fails with a message naming the missing entrypoint', async () => {
    const binary = await build(['src/main.ts'], 'without-worker')
    const gif = await run([binary, 'frames.gif', 'gif'], otherDir)
    expect(gif.code).not.toBe(0)
    expect(gif.stderr).toContain('add src/intake/gif-worker.ts as an entrypoint of `bun build --compile`')
  })
})
