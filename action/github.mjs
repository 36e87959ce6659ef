// The little of GitHub's REST API that suggest mode needs (node's fetch, no dependencies): the lines a
// pull request adds, the review comments alttext posted before, and one review with suggestion blocks.
import { createHash } from 'node:crypto'

/** GitHub's error, with the status kept so the caller can say what permission is missing. */
export class GitHubError extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

/**
 * A client for `api` (GITHUB_API_URL) acting with `token`; the token goes only into the
 * Authorization header, never into a message.
 * @param {{api: string, token: string, repository: string}} options
 */
export function gitHub({ api, token, repository }) {
  const base = api.replace(/\/+$/, '')
  const headers = {
    accept: 'application/vnd.github+json',
    authorization: `Bearer ${token}`,
    'x-github-api-version': '2022-11-28',
    'user-agent': 'alttext-action',
  }
  /** @param {string} url @param {RequestInit} [init] */
  async function call(url, init = {}) {
    const res = await fetch(url, { ...init, headers: { ...headers, ...(init.body ? { 'content-type': 'application/json' } : {}) } })
    if (!res.ok) {
      let detail = ''
      try {
        detail = (await res.json()).message ?? ''
      } catch {}
      throw new GitHubError(res.status, `${init.method ?? 'GET'} ${new URL(url).pathname} answered ${res.status}${detail ? `: ${detail}` : ''}`)
    }
    return res
  }
  /** Every item of a listing, following the Link header's rel="next" (100 a page). @param {string} path */
  async function all(path) {
    const items = []
    let url = `${base}${path}${path.includes('?') ? '&' : '?'}per_page=100`
    for (let pages = 0; url && pages < 100; pages++) {
      const res = await call(url)
      items.push(...(await res.json()))
      url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1] ?? ''
      // Only GitHub's own pages are followed: the token is never sent to another origin.
      if (url && new URL(url).origin !== new URL(base).origin) url = ''
    }
    return items
  }
  const pulls = `/repos/${repository}/pulls`
  return {
    /** path → the line numbers (new side) the pull request adds or changes. @param {number} number */
    async changedLines(number) {
      const changed = new Map()
      for (const file of await all(`${pulls}/${number}/files`)) {
        if (file.status === 'removed' || typeof file.patch !== 'string') continue
        changed.set(file.filename, addedLines(file.patch))
      }
      return changed
    },
    /** The markers of the review comments already on the pull request. @param {number} number */
    async postedMarkers(number) {
      const markers = new Set()
      for (const comment of await all(`${pulls}/${number}/comments`)) {
        for (const match of String(comment.body ?? '').matchAll(MARKER)) markers.add(match[1])
      }
      return markers
    },
    /** One review (a comment, neither approving nor asking for changes) with its line comments. */
    async postReview(number, review) {
      const res = await call(`${base}${pulls}/${number}/reviews`, { method: 'POST', body: JSON.stringify({ event: 'COMMENT', ...review }) })
      return res.json()
    },
  }
}

/** The new-side line numbers that a unified diff's hunks add ("+" lines). @param {string} patch */
export function addedLines(patch) {
  const lines = new Set()
  let line = 0
  for (const text of patch.split('\n')) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text)
    if (hunk) line = Number(hunk[1])
    else if (text.startsWith('+')) lines.add(line++)
    else if (text.startsWith(' ')) line++
    // "-" lines are the old side only; "\ No newline at end of file" is neither.
  }
  return lines
}

const MARKER = /<!-- alttext-suggestion:([0-9a-f]{16}) -->/g

/** What marks a suggestion as posted: the same file, line and text are not posted twice. */
export const markerOf = (path, line, text) => createHash('sha256').update(`${path}\0${line}\0${text}`).digest('hex').slice(0, 16)

/** A fence longer than any run of backticks in `text`, so the text cannot close it. @param {string} text */
export function fenceFor(text) {
  return '`'.repeat(Math.max(3, longestBacktickRun(text) + 1))
}

/** @param {string} text */
const longestBacktickRun = (text) => Math.max(0, ...[...text.matchAll(/`+/g)].map((match) => match[0].length))

/**
 * A review comment: what was found (words of alttext, never the model's text outside the block), and
 * the changed line as a suggestion block that the author can commit with one click.
 * @param {{path: string, line: number, text: string, images: {src: string, status: string}[]}} suggestion
 */
export function commentBody(suggestion) {
  const fence = fenceFor(suggestion.text)
  const what = suggestion.images.map((image) => `${inlineCode(image.src)} (${image.status})`).join(', ')
  return [
    `Proposed alt text for ${what}, written by alttext. Commit the suggestion, or edit it first: you know the picture and its page.`,
    '',
    `${fence}suggestion`,
    suggestion.text,
    fence,
    `<!-- alttext-suggestion:${markerOf(suggestion.path, suggestion.line, suggestion.text)} -->`,
  ].join('\n')
}

/** `text` as inline code whatever backticks it holds. @param {string} text */
export function inlineCode(text) {
  const clean = text.replace(/[\r\n]+/g, ' ')
  const longest = longestBacktickRun(clean)
  const ticks = '`'.repeat(longest + 1)
  return `${ticks}${longest ? ' ' : ''}${clean}${longest ? ' ' : ''}${ticks}`
}
