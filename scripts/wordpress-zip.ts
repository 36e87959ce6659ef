// The WordPress plugin as a release asset: alttext-wordpress-<version>.zip holds the folder `alttext/`
// (what Plugins → Add New → Upload expects), its translators' template made from the sources and the
// plugin's GPL licence. Entries are sorted and dated to a fixed time, so the same sources give the same
// bytes and the same line in SHA256SUMS.
//
//   bun scripts/wordpress-zip.ts [OUT.zip]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { type Zippable, zipSync } from 'fflate'
import pkg from '../package.json' with { type: 'json' }
import { makePot } from './wordpress-pot'

const WORDPRESS = resolve(import.meta.dir, '..', 'integrations', 'wordpress')
const PLUGIN = join(WORDPRESS, 'alttext')
// The earliest date a zip can hold (1980-01-01): no build time in the bytes.
const FIXED_TIME = new Date(1980, 0, 1, 0, 0, 0)

export const pluginZipName = (version: string) => `alttext-wordpress-${version}.zip`

/** The `Version:` of the plugin's header. */
export function pluginVersion(source = readFileSync(join(PLUGIN, 'alttext.php'), 'utf8')): string | undefined {
  return /^\s*\*\s*Version:\s*(\S+)\s*$/m.exec(source)?.[1]
}

/** The zip's bytes; refuses a plugin whose header names another version than the release. */
export function pluginZip(version: string): Uint8Array {
  const declared = pluginVersion()
  if (declared !== version) throw new Error(`the plugin's header says Version: ${declared}, the release is ${version}: make them the same`)
  const files: Record<string, Uint8Array> = {}
  for (const entry of readdirSync(PLUGIN, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = relative(PLUGIN, join(entry.parentPath, entry.name)).replaceAll('\\', '/')
    if (path === 'languages/alttext.pot') continue
    files[`alttext/${path}`] = readFileSync(join(entry.parentPath, entry.name))
  }
  files['alttext/languages/alttext.pot'] = new TextEncoder().encode(makePot())
  files['alttext/LICENSE'] = readFileSync(join(WORDPRESS, 'LICENSE'))
  const tree: Zippable = {}
  for (const name of Object.keys(files).sort()) tree[name] = [files[name]!, { mtime: FIXED_TIME }]
  return zipSync(tree, { level: 9 })
}

if (import.meta.main) {
  const out = resolve(process.argv[2] ?? pluginZipName(pkg.version))
  writeFileSync(out, pluginZip(pkg.version))
  console.log(`wrote ${relative(process.cwd(), out)}`)
}
