// Writes THIRD_PARTY_NOTICES.md: every npm package the binary embeds, with its version, the licence its
// package.json names and its licence text. The packages are the bundler's own inputs for the build's entry
// points (bun build --metafile), so the list is what `bun run build` puts in dist/alttext, natives included.
// `--check` exits 1 when the file is not what this would write (after a dependency changed).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ENTRIES, EXTERNALS, ROOT } from './build'

const OUT = join(ROOT, 'THIRD_PARTY_NOTICES.md')
/** Debian's copies of the GNU licences, which libvips' prebuilt package does not ship. */
const GNU_TEXTS = ['/usr/share/common-licenses/LGPL-3', '/usr/share/common-licenses/GPL-3']

export type Package = { name: string; version: string; license: string; dir: string; texts: { file: string; text: string }[] }

function licenseOf(pkg: { license?: unknown; licenses?: unknown }): string {
  if (typeof pkg.license === 'string') return pkg.license
  const list = Array.isArray(pkg.licenses) ? pkg.licenses : pkg.license ? [pkg.license] : []
  const names = list.map((entry) => (typeof entry === 'string' ? entry : String((entry as { type?: unknown }).type)))
  return names.length > 0 ? names.join(' OR ') : 'UNKNOWN'
}

/** The npm packages among a build's inputs (its metafile's, relative to `root`), each read from its package.json. */
export function packagesOf(root: string, inputs: string[]): Package[] {
  const roots = new Set<string>()
  for (const input of inputs) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)
    if (match) roots.add(match[1]!)
  }
  return [...roots].map((packageRoot) => {
    const dirPath = join(root, packageRoot)
    const pkg = JSON.parse(readFileSync(join(dirPath, 'package.json'), 'utf8'))
    const texts = readdirSync(dirPath)
      .filter((file) => /^(licen[cs]e|copying|notice)/i.test(file))
      .sort()
      .map((file) => ({ file, text: readFileSync(join(dirPath, file), 'utf8').replace(/\r\n/g, '\n').trim() }))
    return { name: pkg.name, version: pkg.version, license: licenseOf(pkg), dir: dirPath, texts }
  })
}

async function embeddedPackages(): Promise<Package[]> {
  const dir = mkdtempSync(join(tmpdir(), 'alttext-notices-'))
  try {
    const build = Bun.spawnSync(
      [
        process.execPath,
        'build',
        ...ENTRIES,
        ...EXTERNALS.flatMap((name) => ['--external', name]),
        '--target=bun',
        '--outdir',
        dir,
        `--metafile=${join(dir, 'meta.json')}`,
      ],
      {
        cwd: ROOT,
        stdout: 'ignore',
        stderr: 'pipe',
      },
    )
    if (build.exitCode !== 0) throw new Error(`bun build failed: ${build.stderr.toString()}`)
    return packagesOf(ROOT, Object.keys((JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as { inputs: Record<string, unknown> }).inputs))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The library table of a prebuilt libvips package's README: which library is under which licence. */
function libvipsLibraries(pkg: Package): string {
  const readme = readFileSync(join(pkg.dir, 'README.md'), 'utf8')
  const table = readme.slice(readme.indexOf('| Library'))
  return table.slice(0, table.search(/\n\s*\n|$/)).trim()
}

function render(packages: Package[]): string {
  const sorted = packages.toSorted((a, b) => a.name.localeCompare(b.name))
  const libvips = sorted.filter((pkg) => pkg.name.startsWith('@img/sharp-libvips-'))
  const lines: string[] = [
    '# Third-party notices',
    '',
    'alttext itself is licensed under the Apache License 2.0 ([LICENSE](LICENSE)). The single binary that',
    '`bun run build` makes (`dist/alttext`) also holds the Bun runtime and the npm packages listed below,',
    'each under its own licence. This file is written by `bun scripts/third-party-notices.ts` from the',
    "bundler's inputs on the platform it ran on (Linux x64 here); a build on another platform embeds that",
    "platform's native packages instead (`@img/sharp-libvips-<platform>`, `@napi-rs/*-<platform>`), under the",
    'same licences.',
    '',
    '## The Bun runtime',
    '',
    'The binary is a Bun 1.4 executable: Bun is MIT-licensed. Bun statically links JavaScriptCore and WebKit',
    '(LGPL-2.0; the patched source is at https://github.com/oven-sh/webkit, and Bun can be rebuilt against a',
    'changed copy of it as its LICENSE.md describes) and further libraries under their own licences',
    '(BoringSSL, brotli, c-ares, libarchive, libbase64, libdeflate, ICU, lol-html, ls-hpack, mimalloc,',
    'picohttpparser, simdutf, SQLite (public domain), tinycc (LGPL-2.1), uSockets and uWebSockets (Apache-2.0),',
    "zlib, zstd). The full list with each licence is Bun's LICENSE.md: https://github.com/oven-sh/bun/blob/main/LICENSE.md.",
    '',
  ]
  for (const pkg of libvips) {
    lines.push(
      `## libvips and its libraries (${pkg.name} ${pkg.version}, ${pkg.license})`,
      '',
      `Image decoding and resizing (sharp) use libvips, a shared library that ${pkg.name} ships prebuilt`,
      `(\`lib/${readdirSync(join(pkg.dir, 'lib')).find((file) => file.startsWith('libvips-cpp.so')) ?? 'libvips-cpp.so'}\`). libvips and several of the libraries built into it are under the`,
      "GNU LGPL 3.0 or later; the others are under the licences in the table below (from that package's README).",
      'The LGPL lets you use a changed or newer libvips with alttext:',
      '',
      '- **From a checkout** (`bun src/main.ts`): replace',
      `  \`node_modules/${pkg.name}/lib/libvips-cpp.so.*\` with your own build of the same libvips version`,
      '  (same file name and soname; sharp finds it through its rpath), or build sharp against a libvips',
      '  installed on the system (`pkg-config --modversion vips-cpp` must find it; see',
      '  https://sharp.pixelplumbing.com/install#custom-libvips).',
      '- **The single binary**: do the above in a checkout of the same alttext version, then `bun run build`;',
      '  the new `dist/alttext` embeds your libvips. The binary unpacks the library into `TMPDIR` when it',
      '  starts, so it is an ordinary shared library loaded at run time, never linked statically.',
      '',
      "libvips' source: https://github.com/libvips/libvips; the build scripts of the prebuilt package:",
      'https://github.com/lovell/sharp-libvips. The texts of the LGPL 3.0 and of the GPL 3.0 it refers to',
      'are at the end of this file.',
      '',
      libvipsLibraries(pkg),
      '',
    )
  }
  lines.push('## npm packages in the binary', '', '| package | version | licence |', '|---|---|---|')
  for (const pkg of sorted) lines.push(`| \`${pkg.name}\` | ${pkg.version} | ${pkg.license} |`)
  lines.push('', '## Licence texts', '', 'As each package ships them. A package without a licence file is under the licence its package.json names.', '')
  const printed = new Map<string, string>()
  for (const pkg of sorted) {
    lines.push(`### ${pkg.name} ${pkg.version}`, '')
    if (pkg.texts.length === 0) lines.push(`No licence file in the package; its package.json names ${pkg.license}.`, '')
    for (const { file, text } of pkg.texts) {
      const key = text.replace(/\s+/g, ' ')
      const earlier = printed.get(key)
      if (earlier) {
        lines.push(`${file}: the same text as ${earlier} above.`, '')
        continue
      }
      printed.set(key, `${pkg.name}'s ${file}`)
      lines.push(`${file}:`, '', '~~~~text', text, '~~~~', '')
    }
  }
  if (libvips.length > 0) {
    for (const path of GNU_TEXTS) {
      const name = path.endsWith('LGPL-3') ? 'GNU Lesser General Public License 3.0' : 'GNU General Public License 3.0'
      lines.push(`### ${name}`, '', '~~~~text', readFileSync(path, 'utf8').trim(), '~~~~', '')
    }
  }
  return `${lines.join('\n').trimEnd()}\n`
}

if (import.meta.main) {
  const text = render(await embeddedPackages())
  if (process.argv.includes('--check')) {
    const current = await Bun.file(OUT)
      .text()
      .catch(() => '')
    if (current !== text) {
      console.error('THIRD_PARTY_NOTICES.md is out of date: run bun scripts/third-party-notices.ts')
      process.exit(1)
    }
  } else {
    writeFileSync(OUT, text)
    console.log(`wrote ${OUT}`)
  }
}
