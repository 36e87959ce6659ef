// The GitHub Action's entry point (node, no dependencies): downloads the released alttext binary for
// the runner's platform, refuses it unless its SHA-256 matches the release's SHA256SUMS, and runs
// `alttext audit` over the paths: `--check` with SARIF (mode check), or against a self-hosted service
// with the proposals posted as review suggestions (mode suggest). Inputs come as INPUT_* variables.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { commentBody, GitHubError, gitHub, markerOf } from './github.mjs'
import { sortSuggestions, suggestionsFrom, summaryOf } from './suggest.mjs'

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
  const mode = input('mode') || 'check'
  if (mode !== 'check' && mode !== 'suggest') fail(`mode must be check or suggest (got "${mode}")`)
  const serviceUrl = input('service-url') || process.env.ALTTEXT_URL || ''
  const apiKey = input('api-key') || process.env.ALTTEXT_API_KEY || ''
  if (mode === 'suggest' && (!serviceUrl || !apiKey)) fail('suggest mode needs service-url and api-key (pass the key from a secret)')
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

  const dir = join(process.env.RUNNER_TEMP || tmpdir(), 'alttext-bin')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, name)
  writeFileSync(path, binary)
  chmodSync(path, 0o755)
  console.log(`alttext ${version}: ${name}, SHA-256 ${actual} matches SHA256SUMS`)

  const paths = input('paths').split(/\s+/).filter(Boolean)
  if (paths.length === 0) fail('paths is empty: name the files or folders to audit')
  const sarif = resolve(input('sarif') || 'alttext.sarif')
  const gate = gateArgs()
  if (mode === 'check') {
    const run = spawnSync(path, ['audit', '--check', '--sarif', sarif, ...gate, ...paths], { stdio: 'inherit' })
    if (run.error) fail(`alttext could not run: ${run.error.message}`)
    output('sarif', sarif)
    if (run.status !== 0 && run.status !== 1) fail(`alttext audit stopped with exit code ${run.status}`)
    if (run.status === 1) console.log('::error::Some images need alt text: see the findings above (and in code scanning).')
    process.exit(run.status ?? 2)
  }
  await suggest({ path, audited: [...gate, ...paths], sarif, serviceUrl, apiKey })
}

/** --exclude per line of the exclude input, and --baseline: passed to alttext as separate arguments, never through a shell. */
function gateArgs() {
  const args = []
  for (const glob of input('exclude').split('\n')) if (glob.trim() !== '') args.push('--exclude', glob.trim())
  if (input('baseline') !== '') args.push('--baseline', input('baseline'))
  return args
}

/** @param {string} name @param {string} value */
function output(name, value) {
  if (process.env.GITHUB_OUTPUT) appendFileSync(process.env.GITHUB_OUTPUT, `${name}=${value}\n`)
}

/**
 * Suggest mode: the audit asks the self-hosted service (key in the environment, never on the command
 * line), writes fixed copies into a temporary folder, and each changed line of a file the pull request
 * changes becomes a review comment with a suggestion block. Advisory: exit 0 unless something broke.
 */
async function suggest({ path, audited, sarif, serviceUrl, apiKey }) {
  const work = mkdtempSync(join(process.env.RUNNER_TEMP || tmpdir(), 'alttext-suggest-'))
  const json = join(work, 'audit.json')
  const report = join(work, 'alttext-audit.html')
  const args = ['audit', '--fix', join(work, 'fixed'), '--json', json, '--report', report, '--sarif', sarif, ...audited]
  const run = spawnSync(path, args, { stdio: 'inherit', env: { ...process.env, ALTTEXT_URL: serviceUrl, ALTTEXT_API_KEY: apiKey } })
  if (run.error) fail(`alttext could not run: ${run.error.message}`)
  if (run.status !== 0 && run.status !== 1) fail(`alttext audit stopped with exit code ${run.status}: nothing suggested`)
  output('sarif', sarif)
  output('report', report)
  if (run.status === 1) console.log('::warning::Some images got no alt text (see the lines above): they are not suggested.')

  const cwd = process.cwd()
  const { suggestions, notSuggested } = suggestionsFrom(JSON.parse(readFileSync(json, 'utf8')), cwd)
  output('suggestions', String(suggestions.length))
  const notes = []
  let rows = suggestions.map((each) => ({ ...each, outcome: 'not posted: not a pull request' }))
  const pull = pullRequest()
  if (!pull) notes.push('Not a pull request: the proposals are listed here only.')
  else if (suggestions.length > 0) rows = await review(pull, suggestions, notes)
  if (suggestions.length === 0) notes.push('No line to suggest: every image checked has alt text, or got none.')
  const summary = summaryOf({ rows, notSuggested, notes })
  if (process.env.GITHUB_STEP_SUMMARY) appendFileSync(process.env.GITHUB_STEP_SUMMARY, summary)
  const posted = rows.filter((row) => row.outcome === 'posted').length
  console.log(`alttext: ${suggestions.length} line(s) with proposed alt text, ${posted} posted as review suggestions`)
  output('posted', String(posted))
  process.exit(0)
}

/** The pull request of this run, from the event payload, or null on any other event. */
function pullRequest() {
  if (!['pull_request', 'pull_request_target'].includes(process.env.GITHUB_EVENT_NAME ?? '')) return null
  const event = JSON.parse(readFileSync(process.env.GITHUB_EVENT_PATH ?? '', 'utf8'))
  const number = event.pull_request?.number
  const sha = event.pull_request?.head?.sha
  if (!Number.isInteger(number) || typeof sha !== 'string') return null
  return { number, sha }
}

/** Posts the new suggestions on changed lines as one review; returns every suggestion with its outcome. */
async function review(pull, suggestions, notes) {
  const token = input('github-token')
  const repository = process.env.GITHUB_REPOSITORY ?? ''
  if (!token || !/^[\w.-]+\/[\w.-]+$/.test(repository)) fail('suggest mode on a pull request needs github-token and GITHUB_REPOSITORY')
  const github = gitHub({ api: process.env.GITHUB_API_URL || 'https://api.github.com', token, repository })
  try {
    const { post, outside, already } = sortSuggestions(suggestions, await github.changedLines(pull.number), await github.postedMarkers(pull.number), markerOf)
    const now = post.slice(0, MAX_COMMENTS)
    const later = new Set(post.slice(MAX_COMMENTS))
    if (now.length > 0) {
      await github.postReview(pull.number, {
        commit_id: pull.sha,
        body: `alttext proposes alt text for ${now.length} changed line(s). Each comment holds a suggestion to commit or edit.`,
        comments: now.map((each) => ({ path: each.path, line: each.line, side: 'RIGHT', body: commentBody(each) })),
      })
    }
    if (later.size > 0) notes.push(`${later.size} more suggestion(s) wait for the next run: one review holds at most ${MAX_COMMENTS}.`)
    const outcome = (each) =>
      outside.includes(each)
        ? 'not posted: the pull request does not change this line'
        : already.includes(each)
          ? 'posted before'
          : later.has(each)
            ? 'next run'
            : 'posted'
    return suggestions.map((each) => ({ ...each, outcome: outcome(each) }))
  } catch (error) {
    if (!(error instanceof GitHubError)) throw error
    const hint =
      error.status === 403 || error.status === 404
        ? ' The token may not write pull requests: give the job "permissions: pull-requests: write" (a pull request from a fork gets a read-only token).'
        : ''
    console.log(`::warning::alttext could not post its suggestions: ${error.message}.${hint}`)
    notes.push(`The review could not be posted (${error.message}).${hint} The proposals are listed here.`)
    return suggestions.map((each) => ({ ...each, outcome: 'not posted: see the note above' }))
  }
}

/** More comments than this in one review are left for the next run (GitHub refuses very large reviews). */
const MAX_COMMENTS = 50

if (import.meta.url === `file://${process.argv[1]}`) await main()
