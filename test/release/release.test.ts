// The pure parts of `bun run release` (scripts/release.ts): the names of the five binaries, the platform
// packages each must embed (and that the lockfile has them), SHA256SUMS lines, the CycloneDX SBOM of
// the packages a build embeds (valid against the 1.6 schema) and the --version stamp the build flags
// bake in. The five compiles themselves run in .ci/run, not here.
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import Ajv from 'ajv'
import addFormats from 'ajv-formats'
import pkg from '../../package.json' with { type: 'json' }
import { buildFlags, ENTRIES, EXTERNALS } from '../../scripts/build'
import {
  binaryName,
  bunTarget,
  checksumFile,
  cycloneDx,
  cycloneDxLicences,
  nativePackages,
  onnxRuntimeFiles,
  npmPlatform,
  npmPurl,
  sbomName,
  TARGET_PROPERTY,
  TARGETS,
  targetName,
} from '../../scripts/release'
import { packagesOf } from '../../scripts/third-party-notices'
import { REPO_ROOT } from '../support/process'

const scratch = mkdtempSync(join(tmpdir(), 'alttext-release-test-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe('release file names', () => {
  test('five targets, each binary named alttext-<version>-<os>-<arch>, .exe on Windows', () => {
    expect(TARGETS.map((target) => binaryName('1.2.3', target))).toEqual([
      'alttext-1.2.3-linux-x64',
      'alttext-1.2.3-linux-arm64',
      'alttext-1.2.3-darwin-x64',
      'alttext-1.2.3-darwin-arm64',
      'alttext-1.2.3-windows-x64.exe',
    ])
    expect(sbomName('1.2.3')).toBe('alttext-1.2.3.cdx.json')
  })

  test("Bun's cross-compile targets and npm's os/cpu/libc for each", () => {
    expect(TARGETS.map(bunTarget)).toEqual(['bun-linux-x64', 'bun-linux-arm64', 'bun-darwin-x64', 'bun-darwin-arm64', 'bun-windows-x64'])
    expect(TARGETS.map(npmPlatform)).toEqual([
      { os: 'linux', cpu: 'x64', libc: 'glibc' },
      { os: 'linux', cpu: 'arm64', libc: 'glibc' },
      { os: 'darwin', cpu: 'x64' },
      { os: 'darwin', cpu: 'arm64' },
      { os: 'win32', cpu: 'x64' },
    ])
  })
})

describe('the platform packages each binary embeds', () => {
  test("sharp's addon, libvips (inside sharp's package on Windows), @napi-rs/image and @napi-rs/blake-hash", () => {
    expect(Object.fromEntries(TARGETS.map((target) => [targetName(target), nativePackages(target)]))).toEqual({
      'linux-x64': ['@img/sharp-linux-x64', '@img/sharp-libvips-linux-x64', '@napi-rs/image-linux-x64-gnu', '@napi-rs/blake-hash-linux-x64-gnu'],
      'linux-arm64': ['@img/sharp-linux-arm64', '@img/sharp-libvips-linux-arm64', '@napi-rs/image-linux-arm64-gnu', '@napi-rs/blake-hash-linux-arm64-gnu'],
      'darwin-x64': ['@img/sharp-darwin-x64', '@img/sharp-libvips-darwin-x64', '@napi-rs/image-darwin-x64', '@napi-rs/blake-hash-darwin-x64'],
      'darwin-arm64': ['@img/sharp-darwin-arm64', '@img/sharp-libvips-darwin-arm64', '@napi-rs/image-darwin-arm64', '@napi-rs/blake-hash-darwin-arm64'],
      'windows-x64': ['@img/sharp-win32-x64', '@napi-rs/image-win32-x64-msvc', '@napi-rs/blake-hash-win32-x64-msvc'],
    })
  })

  test('ONNX Runtime (OCR): its addon and library from onnxruntime-node, none for macOS x64, which it lacks', () => {
    const dir = join(REPO_ROOT, 'node_modules', 'onnxruntime-node', 'bin', 'napi-v6')
    expect(onnxRuntimeFiles({ os: 'darwin', arch: 'x64' })).toEqual([])
    expect(onnxRuntimeFiles({ os: 'windows', arch: 'x64' }).map((file) => file.split('/').at(-1))).toEqual([
      'onnxruntime_binding.node',
      'DirectML.dll',
      'onnxruntime.dll',
    ])
    for (const target of TARGETS)
      for (const file of onnxRuntimeFiles(target)) expect({ file, there: existsSync(join(REPO_ROOT, file)) }).toEqual({ file, there: true })
    expect(existsSync(join(dir, 'darwin', 'x64'))).toBe(false)
  })

  test("the lockfile has every one, for the target's os and cpu, at the version its parent names", () => {
    // `bun install --os --cpu --frozen-lockfile` installs only what bun.lock records: a platform package a
    // dependency names but npm lacks (as @napi-rs/blake-hash 1.3.6 did for all but linux-x64) is absent there.
    const lock = readFileSync(join(REPO_ROOT, 'bun.lock'), 'utf8')
    for (const target of TARGETS) {
      const { os, cpu } = npmPlatform(target)
      for (const name of nativePackages(target)) {
        const line = lock.split('\n').find((l) => l.startsWith(`    "${name}": ["${name}@`)) ?? ''
        expect({ name, locked: line.includes(`"os": "${os}"`) && line.includes(`"cpu": "${cpu}"`) }).toEqual({ name, locked: true })
        const version = line.slice(`    "${name}": ["${name}@`.length).split('"')[0]
        expect({ name, version }).toEqual({ name, version: new RegExp(`"${name}": "([^"]+)"`).exec(lock)?.[1] })
      }
    }
  })
})

describe('SHA256SUMS', () => {
  test("sha256sum's format: the hex digest, two spaces, the file name; sorted by name, one line each", () => {
    const a = 'a'.repeat(64)
    const b = 'b'.repeat(64)
    const text = checksumFile([
      { name: 'alttext-1.2.3.cdx.json', sha256: b },
      { name: 'alttext-1.2.3-linux-x64', sha256: a },
      { name: 'alttext-1.2.3-windows-x64.exe', sha256: b },
    ])
    expect(text).toBe(`${a}  alttext-1.2.3-linux-x64\n${b}  alttext-1.2.3-windows-x64.exe\n${b}  alttext-1.2.3.cdx.json\n`)
    for (const line of text.trimEnd().split('\n')) expect(line).toMatch(/^[0-9a-f]{64} {2}[^\s/]+$/)
  })
})

/** The npm packages a build of the binary's entry points embeds, as the release reads them from the bundler's metafile. */
async function embedded() {
  const build = await Bun.build({
    entrypoints: ENTRIES.map((entry) => join(REPO_ROOT, entry)),
    target: 'bun',
    external: EXTERNALS,
    metafile: true,
    outdir: join(scratch, 'bundle'),
  })
  expect(build.success).toBe(true)
  return packagesOf(process.cwd(), Object.keys(build.metafile!.inputs))
}

/** A validator for CycloneDX 1.6 JSON, from the schemas @cyclonedx/cyclonedx-library ships (as its own validator loads them). */
function cycloneDxValidator() {
  const dir = join(dirname(require.resolve('@cyclonedx/cyclonedx-library/package.json')), 'res', 'schema')
  const schema = (file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8'))
  const ajv = new Ajv({
    strict: false,
    schemas: {
      'http://cyclonedx.org/schema/spdx.SNAPSHOT.schema.json': schema('spdx.SNAPSHOT.schema.json'),
      'http://cyclonedx.org/schema/jsf-0.82.SNAPSHOT.schema.json': schema('jsf-0.82.SNAPSHOT.schema.json'),
      'http://cyclonedx.org/schema/cryptography-defs.SNAPSHOT.schema.json': schema('cryptography-defs.SNAPSHOT.schema.json'),
    },
  })
  addFormats(ajv)
  ajv.addFormat('idn-email', true)
  ajv.addFormat('iri-reference', true)
  return ajv.compile(schema('bom-1.6.SNAPSHOT.schema.json'))
}

describe('the CycloneDX SBOM', () => {
  test('purls and licences: a scope percent-encoded; an SPDX id, an SPDX expression, or a name', () => {
    expect(npmPurl('@img/sharp-linux-x64', '0.35.5')).toBe('pkg:npm/%40img/sharp-linux-x64@0.35.5')
    expect(npmPurl('elysia', '1.4.30')).toBe('pkg:npm/elysia@1.4.30')
    expect(cycloneDxLicences('MIT')).toEqual([{ license: { id: 'MIT' } }])
    expect(cycloneDxLicences('Apache-2.0 AND LGPL-3.0-or-later')).toEqual([{ expression: 'Apache-2.0 AND LGPL-3.0-or-later' }])
    expect(cycloneDxLicences('UNKNOWN')).toEqual([{ license: { name: 'UNKNOWN' } }])
  })

  test('every package the build embeds, natives included, with name, version, purl and licence; valid CycloneDX 1.6', async () => {
    const packages = await embedded()
    const names = packages.map((p) => p.name)
    for (const dependency of Object.keys(pkg.dependencies)) expect(names).toContain(dependency)
    expect(names).toContain('@img/sharp-libvips-linux-x64')
    const serial = crypto.randomUUID()
    const sbom = cycloneDx(pkg, [{ target: 'linux-x64', packages }], { date: '2026-01-02T03:04:05Z', serial })
    writeFileSync(join(scratch, 'sbom.json'), JSON.stringify(sbom))

    const validate = cycloneDxValidator()
    const valid = validate(JSON.parse(readFileSync(join(scratch, 'sbom.json'), 'utf8')))
    expect(validate.errors ?? []).toEqual([])
    expect(valid).toBe(true)
    expect(sbom.serialNumber).toBe(`urn:uuid:${serial}`)
    expect(sbom.metadata.component).toMatchObject({ type: 'application', name: 'alttext', version: pkg.version, purl: `pkg:npm/alttext@${pkg.version}` })
    expect(sbom.metadata.component.licenses).toEqual([{ license: { id: 'Apache-2.0' } }])

    expect(sbom.components).toHaveLength(new Set(packages.map((p) => `${p.name}@${p.version}`)).size)
    for (const p of packages) {
      const purl = npmPurl(p.name, p.version)
      const found = sbom.components.find((c) => c.purl === purl)
      expect(found).toBeDefined()
      expect(`${'group' in found! ? `${found.group}/` : ''}${found!.name}`).toBe(p.name)
      expect(found!.version).toBe(p.version)
      expect(found!.licenses).toEqual(cycloneDxLicences(p.license))
      expect(found!.properties).toEqual([{ name: TARGET_PROPERTY, value: 'linux-x64' }])
    }
    expect(sbom.dependencies).toEqual([{ ref: `pkg:npm/alttext@${pkg.version}`, dependsOn: sbom.components.map((c) => c['bom-ref']) }])
  })

  test('a package in several binaries is one component naming each target; a platform package names its own', () => {
    const shared = { name: 'elysia', version: '1.4.30', license: 'MIT' }
    const sbom = cycloneDx(
      pkg,
      [
        { target: 'linux-x64', packages: [shared, { name: '@img/sharp-linux-x64', version: '0.35.5', license: 'Apache-2.0' }] },
        { target: 'windows-x64', packages: [shared, { name: '@img/sharp-win32-x64', version: '0.35.5', license: 'Apache-2.0 AND LGPL-3.0-or-later' }] },
      ],
      { date: '2026-01-02T03:04:05Z', serial: crypto.randomUUID() },
    )
    expect(sbom.components.map((c) => [c.purl, c.properties.map((p) => p.value)])).toEqual([
      ['pkg:npm/%40img/sharp-linux-x64@0.35.5', ['linux-x64']],
      ['pkg:npm/%40img/sharp-win32-x64@0.35.5', ['windows-x64']],
      ['pkg:npm/elysia@1.4.30', ['linux-x64', 'windows-x64']],
    ])
    expect(cycloneDxValidator()(sbom)).toBe(true)
  })
})

describe('the version stamp', () => {
  test('the build flags define the commit and build date that --version prints, as src/version.ts reads them', async () => {
    const flags = buildFlags({ commit: '0123456789ab', date: '2026-01-02T03:04:05Z' })
    expect(flags.slice(0, 2)).toEqual(['--compile', '--minify'])
    const define = Object.fromEntries(flags.flatMap((flag, i) => (flags[i - 1] === '--define' ? [flag.split(/=(.*)/s).slice(0, 2)] : [])))
    expect(define).toEqual({ __ALTTEXT_COMMIT__: '"0123456789ab"', __ALTTEXT_BUILD_DATE__: '"2026-01-02T03:04:05Z"' })
    // The same definitions through the bundler, without compiling: what the binary's versionLine() returns.
    const build = await Bun.build({ entrypoints: [join(REPO_ROOT, 'src', 'version.ts')], target: 'bun', define, outdir: join(scratch, 'version') })
    expect(build.success).toBe(true)
    const { versionLine } = await import(build.outputs[0]!.path)
    expect(versionLine()).toBe(`alttext ${pkg.version} (commit 0123456789ab, built 2026-01-02T03:04:05Z)`)
  })
})
