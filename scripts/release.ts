// Release builds: the binary for each of the five targets in dist/release/, named
// alttext-<version>-<os>-<arch>[.exe], with a CycloneDX SBOM of the npm packages embedded in them, the
// WordPress plugin's zip, and SHA256SUMS over all of it (`sha256sum -c SHA256SUMS` in that folder checks a download).
//
// A binary embeds the native packages (sharp's addon and libvips, @napi-rs/*) that the bundler finds
// in node_modules, and the checkout's node_modules has this machine's only. So each target is built in
// a staging copy (package.json, the lockfile, patches, src) whose node_modules `bun install --os --cpu
// --libc` filled with that target's platform packages, from the same lockfile. The copy lives in the
// system's temporary folder, outside the checkout: from inside it, the bundler would also find the
// checkout's node_modules (this machine's packages) by walking up. Bun fetches each target's runtime
// from npm once and keeps it in its install cache (~/.bun/install/cache).
//
//   bun scripts/release.ts [--target linux-x64]...
import { SPDX } from '@cyclonedx/cyclonedx-library'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pkg from '../package.json' with { type: 'json' }
import { compile, ROOT, type Stamp, stampNow } from './build'
import { type Package, packagesOf } from './third-party-notices'
import { pluginZip, pluginZipName } from './wordpress-zip'

export type Target = { os: 'linux' | 'darwin' | 'windows'; arch: 'x64' | 'arm64' }

export const TARGETS: readonly Target[] = [
  { os: 'linux', arch: 'x64' },
  { os: 'linux', arch: 'arm64' },
  { os: 'darwin', arch: 'x64' },
  { os: 'darwin', arch: 'arm64' },
  { os: 'windows', arch: 'x64' },
]

export const RELEASE_DIR = join(ROOT, 'dist', 'release')
/** What a staging copy needs for `bun install` and `bun build`. */
const STAGED = ['package.json', 'bun.lock', 'bunfig.toml', 'tsconfig.json', 'patches', 'src']

export const targetName = (target: Target) => `${target.os}-${target.arch}`

/** The binary's file name in a release. */
export function binaryName(version: string, target: Target): string {
  return `alttext-${version}-${targetName(target)}${target.os === 'windows' ? '.exe' : ''}`
}

export const sbomName = (version: string) => `alttext-${version}.cdx.json`

/** Bun's `--target` for a cross-compiled executable. */
export const bunTarget = (target: Target) => `bun-${targetName(target)}`

/** The target as npm's os/cpu/libc fields spell it, which `bun install --os --cpu --libc` filters on. */
export function npmPlatform(target: Target): { os: 'linux' | 'darwin' | 'win32'; cpu: Target['arch']; libc?: 'glibc' } {
  if (target.os === 'linux') return { os: 'linux', cpu: target.arch, libc: 'glibc' }
  return { os: target.os === 'windows' ? 'win32' : 'darwin', cpu: target.arch }
}

/**
 * The platform packages a target's binary must embed. On Windows sharp's package carries libvips' DLLs
 * itself; elsewhere libvips is a package of its own.
 */
export function nativePackages(target: Target): string[] {
  const { os, cpu } = npmPlatform(target)
  const napi = os === 'linux' ? `${os}-${cpu}-gnu` : os === 'win32' ? `${os}-${cpu}-msvc` : `${os}-${cpu}`
  const sharp = [`@img/sharp-${os}-${cpu}`, ...(os === 'win32' ? [] : [`@img/sharp-libvips-${os}-${cpu}`])]
  return [...sharp, `@napi-rs/image-${napi}`, `@napi-rs/blake-hash-${napi}`]
}

/** SHA256SUMS as sha256sum writes it: `<hex>  <file name>` a line, sorted by name. */
export function checksumFile(files: { name: string; sha256: string }[]): string {
  return files
    .toSorted((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ name, sha256 }) => `${sha256}  ${name}\n`)
    .join('')
}

/** The package URL of an npm package (its scope's @ percent-encoded, as the purl spec has it). */
export function npmPurl(name: string, version: string): string {
  return `pkg:npm/${name.replace(/^@/, '%40')}@${encodeURIComponent(version)}`
}

type Licence = { license: { id: string } | { name: string } } | { expression: string }

/** A package.json licence as CycloneDX takes it: an SPDX id, an SPDX expression, or a plain name. */
export function cycloneDxLicences(license: string): Licence[] {
  if (SPDX.isSupportedSpdxId(license)) return [{ license: { id: license } }]
  if (/\s(OR|AND|WITH)\s|^\(/.test(license)) return [{ expression: license }]
  return [{ license: { name: license } }]
}

type SbomPackage = Pick<Package, 'name' | 'version' | 'license'>

function component(type: 'application' | 'library', { name, version, license }: SbomPackage) {
  const purl = npmPurl(name, version)
  const scoped = /^(@[^/]+)\/(.+)$/.exec(name)
  return {
    type,
    'bom-ref': purl,
    ...(scoped ? { group: scoped[1]!, name: scoped[2]! } : { name }),
    version,
    licenses: cycloneDxLicences(license),
    purl,
  }
}

/** The property naming a binary that embeds a component (`linux-x64`); one per binary. */
export const TARGET_PROPERTY = 'alttext:target'

/**
 * A CycloneDX 1.6 SBOM of the release: alttext as the application, each npm package embedded in any of
 * its binaries as a library it depends on, with the targets whose binary embeds it.
 */
export function cycloneDx(app: SbomPackage, embedded: { target: string; packages: SbomPackage[] }[], { date, serial }: { date: string; serial: string }) {
  const unique = new Map<string, { pkg: SbomPackage; targets: string[] }>()
  for (const { target, packages } of embedded) {
    for (const pkg of packages) {
      const key = `${pkg.name}@${pkg.version}`
      const entry = unique.get(key) ?? { pkg, targets: [] }
      if (!entry.targets.includes(target)) entry.targets.push(target)
      unique.set(key, entry)
    }
  }
  const libraries = [...unique.values()]
    .toSorted((a, b) => a.pkg.name.localeCompare(b.pkg.name) || a.pkg.version.localeCompare(b.pkg.version))
    .map(({ pkg, targets }) => ({ ...component('library', pkg), properties: targets.map((value) => ({ name: TARGET_PROPERTY, value })) }))
  const root = component('application', app)
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.6',
    serialNumber: `urn:uuid:${serial}`,
    version: 1,
    metadata: {
      timestamp: date,
      tools: { components: [{ type: 'application', name: 'alttext scripts/release.ts', version: app.version }] },
      component: root,
    },
    components: libraries,
    dependencies: [{ ref: root['bom-ref'], dependsOn: libraries.map((l) => l['bom-ref']) }],
  }
}

/** A staging copy of the checkout with the target's platform packages installed; returns its folder. */
function stage(target: Target, staging: string): string {
  const dir = join(staging, targetName(target))
  for (const entry of STAGED) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true })
  const { os, cpu, libc } = npmPlatform(target)
  const flags = ['--frozen-lockfile', '--production', '--ignore-scripts', '--no-progress', '--no-summary', `--os=${os}`, `--cpu=${cpu}`]
  if (libc) flags.push(`--libc=${libc}`)
  const install = Bun.spawnSync([process.execPath, 'install', ...flags], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
  if (install.exitCode !== 0) throw new Error(`bun install for ${targetName(target)} failed:\n${install.stderr.toString()}`)
  const missing = nativePackages(target).filter((name) => !existsSync(join(dir, 'node_modules', name, 'package.json')))
  if (missing.length > 0) throw new Error(`bun install for ${targetName(target)} did not install ${missing.join(', ')}`)
  return dir
}

/** A shared library or Node-API addon, by its file name. */
export const NATIVE_FILE = /\.(node|dll|dylib)$|\.so(\.\d+)*$/

/**
 * The files of onnxruntime-node (one package carrying every platform's) that the target's binary embeds
 * for OCR (src/ocr/runtime.ts): its addon and the runtime library; none for macOS x64, which it lacks.
 */
export function onnxRuntimeFiles(target: Target): string[] {
  const { os, cpu } = npmPlatform(target)
  if (os === 'darwin' && cpu === 'x64') return []
  const library = { linux: ['libonnxruntime.so.1'], darwin: ['libonnxruntime.1.dylib'], win32: ['DirectML.dll', 'onnxruntime.dll'] }[os]
  return ['onnxruntime_binding.node', ...library].map((file) => join('node_modules', 'onnxruntime-node', 'bin', 'napi-v6', os, cpu, file))
}

/** The native files of the target's platform packages and of its ONNX Runtime in a staging copy (package-relative paths). */
function nativeFiles(root: string, target: Target): string[] {
  return nativePackages(target)
    .flatMap((name) =>
      readdirSync(join(root, 'node_modules', name), { recursive: true, encoding: 'utf8' })
        .filter((file) => NATIVE_FILE.test(file))
        .map((file) => join('node_modules', name, file)),
    )
    .concat(onnxRuntimeFiles(target))
}

/**
 * Throws unless the binary holds each native file of the target's platform packages byte for byte:
 * what the bundler embeds is what the program can load at run time (src/intake/codec.ts loads libvips
 * itself), so a file missing here is an image pipeline that fails on that platform.
 */
function checkEmbedded(binary: string, root: string, target: Target): string[] {
  const bytes = readFileSync(binary)
  const files = nativeFiles(root, target)
  const missing = files.filter((file) => !bytes.includes(readFileSync(join(root, file))))
  if (missing.length > 0) throw new Error(`the ${targetName(target)} binary does not embed ${missing.join(', ')}`)
  return files
}

type Built = { target: Target; file: string; natives: string[]; seconds: number; bytes: number; packages: Package[] }

function buildTarget(target: Target, stamp: Stamp, staging: string): Built {
  const started = performance.now()
  const root = stage(target, staging)
  const file = join(RELEASE_DIR, binaryName(pkg.version, target))
  const metafile = join(root, 'meta.json')
  compile({ root, outfile: file, stamp, target: bunTarget(target), metafile })
  const inputs = Object.keys((JSON.parse(readFileSync(metafile, 'utf8')) as { inputs: Record<string, unknown> }).inputs)
  const outside = inputs.filter((input) => input.startsWith('../') || input.startsWith('/'))
  if (outside.length > 0) throw new Error(`the ${targetName(target)} build read files outside its staging copy: ${outside.slice(0, 3).join(', ')}`)
  const packages = packagesOf(root, inputs)
  // The bundler embeds what it resolved: a platform package it did not reach would be missing at run time.
  const embedded = new Set(packages.map((p) => p.name))
  const absent = nativePackages(target).filter((name) => !embedded.has(name))
  if (absent.length > 0) throw new Error(`the ${targetName(target)} binary does not embed ${absent.join(', ')}`)
  const natives = checkEmbedded(file, root, target)
  return { target, file, natives, seconds: (performance.now() - started) / 1000, bytes: statSync(file).size, packages }
}

const sha256 = async (path: string) => new Bun.CryptoHasher('sha256').update(await Bun.file(path).arrayBuffer()).digest('hex')

if (import.meta.main) {
  const wanted = process.argv.flatMap((arg, i) => (process.argv[i - 1] === '--target' ? [arg] : []))
  const targets = wanted.length > 0 ? TARGETS.filter((t) => wanted.includes(targetName(t))) : TARGETS
  const unknown = wanted.filter((name) => !TARGETS.some((t) => targetName(t) === name))
  if (unknown.length > 0) throw new Error(`unknown --target ${unknown.join(', ')} (known: ${TARGETS.map(targetName).join(', ')})`)
  rmSync(RELEASE_DIR, { recursive: true, force: true })
  mkdirSync(RELEASE_DIR, { recursive: true })
  const stamp = stampNow()
  const builds: Built[] = []
  const staging = mkdtempSync(join(tmpdir(), 'alttext-release-'))
  try {
    for (const target of targets) {
      const built = buildTarget(target, stamp, staging)
      builds.push(built)
      const natives = built.natives.map((file) => file.split('/').at(-1)).join(', ')
      console.log(`${binaryName(pkg.version, target)}: ${(built.bytes / 2 ** 20).toFixed(1)} MiB in ${built.seconds.toFixed(1)} s, embeds ${natives}`)
    }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
  const sbom = cycloneDx(
    pkg,
    builds.map((b) => ({ target: targetName(b.target), packages: b.packages })),
    { date: stamp.date, serial: crypto.randomUUID() },
  )
  writeFileSync(join(RELEASE_DIR, sbomName(pkg.version)), `${JSON.stringify(sbom, null, 2)}\n`)
  // The WordPress plugin, with its translators' template, as Plugins → Add New → Upload takes it.
  writeFileSync(join(RELEASE_DIR, pluginZipName(pkg.version)), pluginZip(pkg.version))
  const files = [...builds.map((b) => b.file), join(RELEASE_DIR, sbomName(pkg.version)), join(RELEASE_DIR, pluginZipName(pkg.version))]
  const sums = await Promise.all(files.map(async (file) => ({ name: file.slice(RELEASE_DIR.length + 1), sha256: await sha256(file) })))
  writeFileSync(join(RELEASE_DIR, 'SHA256SUMS'), checksumFile(sums))
  console.log(
    `${sbomName(pkg.version)}: ${sbom.components.length} npm packages; SHA256SUMS: ${sums.length} files (commit ${stamp.commit}, built ${stamp.date})`,
  )
}
