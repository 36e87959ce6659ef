// The project's licence and the notices of what the binary embeds: the Apache-2.0 text, package.json's
// field, README's section, and THIRD_PARTY_NOTICES.md naming every runtime package with its licence.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { REPO_ROOT } from '../support/process'

const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8')
const notices = read('THIRD_PARTY_NOTICES.md')

type Manifest = { name: string; version: string; license?: string }
const manifest = (name: string): Manifest => JSON.parse(read(`node_modules/${name}/package.json`))

/** The native packages installed for this platform: their files are what the binary unpacks and loads. */
function nativePackages(): string[] {
  const scoped = (scope: string) => readdirSync(join(REPO_ROOT, 'node_modules', scope)).map((name) => `${scope}/${name}`)
  return [...scoped('@img'), ...scoped('@napi-rs')].filter((name) => /-(linux|darwin|win32)-/.test(name))
}

describe('the licence', () => {
  test('LICENSE is the Apache License 2.0 as apache.org publishes it', () => {
    const text = read('LICENSE')
    // The MD5 of https://www.apache.org/licenses/LICENSE-2.0.txt.
    expect(new Bun.CryptoHasher('md5').update(text).digest('hex')).toBe('3b83ef96387f14655fc854ddc3c6bd57')
    expect(text).toContain('Apache License\n                           Version 2.0, January 2004')
    expect(text).toContain('END OF TERMS AND CONDITIONS')
  })

  test('package.json says Apache-2.0; README has a licence section naming both files', () => {
    expect(pkg.license).toBe('Apache-2.0')
    const readme = read('README.md')
    const section = readme.slice(readme.indexOf('## Licence'))
    expect(section).toStartWith('## Licence\n\nApache-2.0 ([LICENSE](LICENSE))')
    expect(section.slice(0, 400)).toContain('[THIRD_PARTY_NOTICES.md](THIRD_PARTY_NOTICES.md)')
  })
})

describe('THIRD_PARTY_NOTICES.md', () => {
  test('names every runtime dependency and every native package with its version and licence', () => {
    const names = [...Object.keys(pkg.dependencies), ...nativePackages()]
    expect(names).toContain('@img/sharp-libvips-linux-x64')
    for (const name of names) {
      const { version, license } = manifest(name)
      expect({ name, row: notices.includes(`| \`${name}\` | ${version} | ${license} |`) }).toEqual({ name, row: true })
    }
  })

  test('says how to replace libvips (LGPL) and carries the LGPL and GPL texts', () => {
    expect(notices).toContain('LGPL-3.0-or-later')
    expect(notices).toContain('node_modules/@img/sharp-libvips-linux-x64/lib/libvips-cpp.so.*')
    expect(notices).toContain('GNU LESSER GENERAL PUBLIC LICENSE')
    expect(notices).toContain('GNU GENERAL PUBLIC LICENSE')
    expect(notices).toContain('Bun is MIT-licensed')
  })

  test('is what scripts/third-party-notices.ts writes from the packages the build embeds', () => {
    const check = Bun.spawnSync([process.execPath, join(REPO_ROOT, 'scripts', 'third-party-notices.ts'), '--check'], { cwd: REPO_ROOT, stderr: 'pipe' })
    expect({ code: check.exitCode, stderr: check.stderr.toString() }).toEqual({ code: 0, stderr: '' })
  })
})
