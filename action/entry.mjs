// The GitHub Action's entry point (node, no dependencies): downloads the released alttext binary for
// the runner's platform, refuses it unless its SHA-256 matches the release's SHA256SUMS, and runs
// `alttext audit --check` over the paths with SARIF output. Inputs come as INPUT_* variables.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { appendFileSync, chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

/** @param {string} name */
const input = (name) => (process.env[`INPUT_${name.toUpperCase().replaceAll('-', '_')}`] ?? '').trim()

/** @param {string} message */
function fail(message) {
  console.log(`::error::${message}`)
  process.exit(2)
}

/** The release asset for this runner: alttext-<version>-<os>-<arch>[.exe]. */
export function assetName(version, platform = process.platform, arch = process.arch) {
  const os = { linux: 'linux', darwin: 'darwin', win32: 'windows' }[platform]
  if (!os || (arch !== 'x64' && arch !== 'arm64') || (os === 'windows' && arch !== 'x64')) {
    throw new Error(`alttext has no release binary for ${platform}-${arch}`)
  }
  return `alttext-${version}-${os}-${arch}${os === 'windows' ? '.exe' : ''}`
}

/** The hex digest SHA256SUMS gives for `name`, or undefined. */
export function expectedDigest(sums, name) {
  for (const line of sums.split('\n')) {
    const match = /^([0-9a-f]{64}) [ *](.+)$/.exec(line.trim())
    if (match && match[2] === name) return match[1]
  }
  return undefined
}

/** @param {string} url */
async function download(url) {
  const res = await fetch(url, { redirect: 'follow' })
  if (!res.ok) throw new Error(`${url} answered ${res.status}`)
  return Buffer.from(await res.arrayBuffer())
}

async function main() {
  const version = input('version').replace(/^v/, '')
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) fail(`version must be a release version such as 0.1.0 (got "${version}")`)
  const base = `${input('release-url').replace(/\/+$/, '')}/download/v${version}`
  let name
  try {
    name = assetName(version)
  } catch (error) {
    fail(error.message)
  }
  let sums
  let binary
  try {
    sums = (await download(`${base}/SHA256SUMS`)).toString('utf8')
    binary = await download(`${base}/${name}`)
  } catch (error) {
    fail(`could not download alttext ${version}: ${error.message}`)
  }
  const expected = expectedDigest(sums, name)
  if (!expected) fail(`SHA256SUMS of ${version} has no line for ${name}: not running an unchecked binary`)
  const actual = createHash('sha256').update(binary).digest('hex')
  if (actual !== expected) fail(`${name} does not match SHA256SUMS (expected ${expected}, got ${actual}): not running it`)

  const dir = join(process.env.RUNNER_TEMP || '.', 'alttext-bin')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, name)
  writeFileSync(path, binary)
  chmodSync(path, 0o755)
  console.log(`alttext ${version}: ${name}, SHA-256 ${actual} matches SHA256SUMS`)

  const paths = input('paths').split(/\s+/).filter(Boolean)
  if (paths.length === 0) fail('paths is empty: name the files or folders to audit')
  const sarif = resolve(input('sarif') || 'alttext.sarif')
  const run = spawnSync(path, ['audit', '--check', '--sarif', sarif, ...paths], { stdio: 'inherit' })
  if (run.error) fail(`alttext could not run: ${run.error.message}`)
  if (process.env.GITHUB_OUTPUT) appendFileSync(process.env.GITHUB_OUTPUT, `sarif=${sarif}\n`)
  if (run.status !== 0 && run.status !== 1) fail(`alttext audit stopped with exit code ${run.status}`)
  if (run.status === 1) console.log('::error::Some images need alt text: see the findings above (and in code scanning).')
  process.exit(run.status ?? 2)
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
