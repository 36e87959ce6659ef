// The Action in suggest mode, end to end on loopback: node runs the entry script as a runner would; the
// "release binary" (checked against SHA256SUMS) is the real CLI from source; it asks the real service
// (fake model); the proposals go to a fake GitHub API as one review whose suggestion blocks touch only
// the lines the pull request changes, never twice, and no key or token is ever printed.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { REPO_ROOT } from '../support/process'
import { FIXTURE_SITE, MODEL, REPLIES } from '../cli/audit-support'
import { inputVariables, startReleaseServer } from './release-server'

const entryModule = '../../action/entry.mjs'
const { assetName } = (await import(entryModule)) as { assetName: (version: string) => string }

const VERSION = '9.8.7'
const NAME = assetName(VERSION)
// The release binary's stand-in: the real CLI, run from this checkout.
const BINARY = `#!/bin/sh\nprintf '%s\\n' "$@" > "$RUNNER_TEMP/args"\nexec "${process.execPath}" "${join(REPO_ROOT, 'src', 'main.ts')}" "$@"\n`
const TOKEN = 'ghs_test-token-that-must-never-be-printed'
const PULL = 7
const HEAD = '0123456789abcdef0123456789abcdef01234567'

type Review = { commit_id: string; event: string; body: string; comments: { path: string; line: number; side: string; body: string }[] }
type Recorded = { method: string; path: string; authorization: string | null }

let env: AltTextEnv
let release: ReturnType<typeof startReleaseServer>
let github: ReturnType<typeof Bun.serve>
let elsewhere: ReturnType<typeof Bun.serve>
let dir: string
let repo: string
const state = {
  requests: [] as Recorded[],
  elsewhereRequests: 0,
  files: [] as { filename: string; status: string; patch?: string }[],
  comments: [] as { path: string; line: number; body: string }[],
  reviews: [] as Review[],
  reviewStatus: 200,
}

/** A patch adding `lines` (1-based) of `text`, as GitHub gives for a changed file. */
function patchAdding(text: string, lines: number[]) {
  return lines.map((line) => `@@ -${line},0 +${line},1 @@\n+${text.split('\n')[line - 1]}`).join('\n')
}

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: MODEL })
  release = startReleaseServer(VERSION, NAME, BINARY)
  elsewhere = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch() {
      state.elsewhereRequests++
      return Response.json([])
    },
  })
  github = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      state.requests.push({ method: req.method, path: url.pathname + url.search, authorization: req.headers.get('authorization') })
      if (req.headers.get('authorization') !== `Bearer ${TOKEN}`) return Response.json({ message: 'Bad credentials' }, { status: 401 })
      const pulls = `/repos/acme/site/pulls/${PULL}`
      if (url.pathname === `${pulls}/files`) {
        // Two pages, as GitHub paginates with a Link header.
        const page = Number(url.searchParams.get('page') ?? '1')
        const next = `<http://127.0.0.1:${github.port}${pulls}/files?per_page=100&page=2>; rel="next"`
        return Response.json(page === 1 ? state.files.slice(0, 1) : state.files.slice(1), { headers: page === 1 ? { link: next } : {} })
      }
      if (url.pathname === `${pulls}/comments`) {
        // A "next" page on another origin: the token must not follow it there.
        return Response.json(state.comments, { headers: { link: `<http://127.0.0.1:${elsewhere.port}/steal?page=2>; rel="next"` } })
      }
      if (url.pathname === `${pulls}/reviews` && req.method === 'POST') {
        if (state.reviewStatus !== 200) return Response.json({ message: 'Resource not accessible by integration' }, { status: state.reviewStatus })
        const review = (await req.json()) as Review
        const changed = new Map(state.files.map((file) => [file.filename, file.patch ?? '']))
        for (const comment of review.comments) {
          // GitHub refuses a comment on a line the diff does not show: so does this one.
          if (!changed.get(comment.path)?.includes(`+${readFileSync(join(repo, comment.path), 'utf8').split('\n')[comment.line - 1]}`)) {
            return Response.json({ message: 'Validation Failed' }, { status: 422 })
          }
        }
        state.reviews.push(review)
        state.comments.push(...review.comments)
        return Response.json({ id: state.reviews.length })
      }
      return Response.json({ message: 'Not Found' }, { status: 404 })
    },
  })
  dir = mkdtempSync(join(tmpdir(), 'alttext-action-suggest-'))
})
afterAll(async () => {
  release?.stop()
  github?.stop(true)
  elsewhere?.stop(true)
  await env?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const INDEX = readFileSync(join(FIXTURE_SITE, 'index.html'), 'utf8')
const GUIDE = '# Flying guide\n\nHow to launch a kite.\n\n![kite.jpg](img/kite.jpg)\n\nThat is all.\n'
beforeEach(() => {
  env.ollama.reset()
  repo = mkdtempSync(join(dir, 'repo-'))
  cpSync(FIXTURE_SITE, join(repo, 'site'), { recursive: true })
  mkdirSync(join(repo, 'docs'))
  cpSync(join(FIXTURE_SITE, 'img'), join(repo, 'docs', 'img'), { recursive: true })
  writeFileSync(join(repo, 'docs', 'guide.md'), GUIDE)
  // The pull request changes two lines of index.html (the logo, line 9, and the kite, line 16) and adds the guide.
  state.files = [
    { filename: 'site/index.html', status: 'modified', patch: patchAdding(INDEX, [9, 16]) },
    {
      filename: 'docs/guide.md',
      status: 'added',
      patch: `@@ -0,0 +1,7 @@\n${GUIDE.trimEnd()
        .split('\n')
        .map((line) => `+${line}`)
        .join('\n')}`,
    },
    { filename: 'docs/img/kite.jpg', status: 'added' },
    { filename: 'old.html', status: 'removed', patch: '@@ -1 +0,0 @@\n-<img src=a.png>' },
  ]
  state.comments = []
  state.reviews = []
  state.requests = []
  state.elsewhereRequests = 0
  state.reviewStatus = 200
})

async function runAction(inputs: Record<string, string> = {}, extra: Record<string, string> = {}) {
  const runnerTemp = mkdtempSync(join(dir, 'runner-'))
  const output = join(runnerTemp, 'github-output')
  const summary = join(runnerTemp, 'step-summary')
  const event = join(runnerTemp, 'event.json')
  writeFileSync(output, '')
  writeFileSync(summary, '')
  writeFileSync(event, JSON.stringify({ action: 'synchronize', pull_request: { number: PULL, head: { sha: HEAD } } }))
  const all = {
    mode: 'suggest',
    paths: 'site docs/guide.md',
    version: VERSION,
    'release-url': release.url,
    'service-url': env.service.url,
    'api-key': env.key,
    'github-token': TOKEN,
    sarif: join(runnerTemp, 'alttext.sarif'),
    ...inputs,
  }
  // Spawned asynchronously: the service and the fake GitHub answer from this process's event loop.
  const run = Bun.spawn(['node', join(REPO_ROOT, 'action', 'entry.mjs')], {
    cwd: repo,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? runnerTemp,
      RUNNER_TEMP: runnerTemp,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_EVENT_PATH: event,
      GITHUB_REPOSITORY: 'acme/site',
      GITHUB_API_URL: `http://127.0.0.1:${github.port}`,
      ...inputVariables(all),
      ...extra,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [code, stdout, stderr] = await Promise.all([run.exited, new Response(run.stdout).text(), new Response(run.stderr).text()])
  const outputs = Object.fromEntries(
    readFileSync(output, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(/=(.*)/s).slice(0, 2)),
  )
  let args = ''
  try {
    args = readFileSync(join(runnerTemp, 'args'), 'utf8')
  } catch {}
  return { code, out: stdout + stderr, outputs, summary: readFileSync(summary, 'utf8'), args }
}

/** index.html as the fix writes it: the file's line with the alt inserted after the tag name. */
const withAlt = (line: number, alt: string) => INDEX.split('\n')[line - 1]!.replace('<img ', `<img alt="${alt}" `)

describe('the Action in suggest mode: happy', () => {
  test('one review with suggestion blocks on the changed lines only, each the line with its new alt text', async () => {
    const run = await runAction()
    expect({ code: run.code, out: run.out }).toMatchObject({ code: 0 })
    expect(state.reviews).toHaveLength(1)
    const review = state.reviews[0]!
    expect(review).toMatchObject({ commit_id: HEAD, event: 'COMMENT' })
    expect(review.comments.map((each) => `${each.path}:${each.line}`)).toEqual(['site/index.html:9', 'site/index.html:16', 'docs/guide.md:5'])
    for (const comment of review.comments) expect(comment.side).toBe('RIGHT')
    const [logo, kite, guide] = review.comments.map((each) => /```suggestion\n(.*)\n```/.exec(each.body)?.[1])
    expect(logo).toBe(withAlt(9, REPLIES[64]!))
    expect(kite).toBe(INDEX.split('\n')[15]!.replace('alt="IMG_2041.JPG"', `alt="${REPLIES[320]}"`))
    expect(guide).toBe(`![${REPLIES[320]}](img/kite.jpg)`)
    expect(review.comments[1]!.body).toContain('`img/kite.jpg` (poor)')

    // Lines of the site the pull request does not touch (the team photo, line 19) are in the summary, not posted.
    expect(run.summary).toContain('| site/index.html | 19 | img/team.jpg (missing) |')
    expect(run.summary).toContain('not posted: the pull request does not change this line |')
    expect(run.summary).toContain('| docs/guide.md | 5 | img/kite.jpg (poor) |')
    expect(Number(run.outputs.suggestions)).toBeGreaterThan(3)
    expect(run.outputs.posted).toBe('3')
    expect(readFileSync(run.outputs.report!, 'utf8')).toContain('<html')
    expect(JSON.parse(readFileSync(run.outputs.sarif!, 'utf8')).version).toBe('2.1.0')
    // The sources themselves are untouched: the fix went to the runner's temporary folder.
    expect(readFileSync(join(repo, 'site', 'index.html'), 'utf8')).toBe(INDEX)
    expect(readFileSync(join(repo, 'docs', 'guide.md'), 'utf8')).toBe(GUIDE)
  }, 60_000)

  test('run again on the same pull request: nothing is posted twice', async () => {
    await runAction()
    expect(state.reviews).toHaveLength(1)
    const again = await runAction()
    expect(again.code).toBe(0)
    expect(state.reviews).toHaveLength(1)
    expect(again.outputs.posted).toBe('0')
    expect(again.summary).toContain('| posted before |')
  }, 60_000)

  test('on a push (no pull request) the proposals are listed in the job summary only', async () => {
    const run = await runAction({}, { GITHUB_EVENT_NAME: 'push' })
    expect(run.code).toBe(0)
    expect(state.requests).toEqual([])
    expect(run.summary).toContain('Not a pull request: the proposals are listed here only.')
    expect(run.summary).toContain('| site/index.html | 9 |')
  }, 60_000)
})

describe('the Action in suggest mode: errors', () => {
  test('no service URL or key: a clear error, nothing downloaded or run', async () => {
    const run = await runAction({ 'api-key': '' })
    expect(run.code).toBe(2)
    expect(run.out).toContain('::error::suggest mode needs service-url and api-key')
    expect(env.ollama.requests).toHaveLength(0)
    expect((await runAction({ mode: 'fix' })).out).toContain('::error::mode must be check or suggest (got "fix")')
  })

  test('a wrong key or a service that is down: exit 2, nothing suggested, nothing posted', async () => {
    const wrong = await runAction({ 'api-key': 'alt_wrong' })
    expect(wrong.code).toBe(2)
    expect(wrong.out).toContain('nothing suggested')
    const down = await runAction({ 'service-url': 'http://127.0.0.1:9' })
    expect(down.code).toBe(2)
    expect(state.reviews).toEqual([])
  }, 60_000)

  test('a token that may not write pull requests: a warning naming the permission; the summary still lists the proposals', async () => {
    state.reviewStatus = 403
    const run = await runAction()
    expect(run.code).toBe(0)
    expect(run.out).toContain(
      '::warning::alttext could not post its suggestions: POST /repos/acme/site/pulls/7/reviews answered 403: Resource not accessible by integration.',
    )
    expect(run.out).toContain('permissions: pull-requests: write')
    expect(run.summary).toContain('| site/index.html | 9 |')
    expect(run.outputs.posted).toBe('0')
  }, 60_000)
})

describe('the Action in suggest mode: security', () => {
  test('the API key and the token are never printed, the key never on a command line, the token only to GitHub', async () => {
    const run = await runAction()
    expect(run.code).toBe(0)
    const written = run.out + run.summary + JSON.stringify(run.outputs) + JSON.stringify(state.reviews)
    expect(written).not.toContain(env.key)
    expect(run.args).toContain('--fix')
    expect(run.args).not.toContain(env.key)
    expect(written).not.toContain(TOKEN)
    expect(state.requests.every((each) => each.authorization === `Bearer ${TOKEN}`)).toBe(true)
    // The comments' "next page" named another origin: it was not followed with the token.
    expect(state.elsewhereRequests).toBe(0)
  }, 60_000)
})
