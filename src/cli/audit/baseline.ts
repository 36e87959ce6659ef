// --baseline FILE and --write-baseline FILE: the findings a team has accepted, so that --check fails only
// on new ones. Each finding has a fingerprint of what it is, not where: the document, the rule, the image
// as written and what it is (the hash of a local or in-book image's bytes, a remote image's address),
// its current text, and which occurrence of that same image it is; never the line, so edits elsewhere
// do not churn the file. A finding whose image changed gets another fingerprint: it is new. The file is
// JSON, versioned, sorted, meant to be committed beside the site.
import { createHash } from 'node:crypto'
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { sep } from 'node:path'
import { UsageError } from '../shared/args'
import type { ImageTarget, Unresolved } from './pages'
import type { Finding, PageResult } from './report'
import { lintRule, SARIF_RULES, type SarifRuleKind } from './sarif'

export const BASELINE_VERSION = 1
export const BASELINE_TOOL = 'alttext'
/** A baseline is refused above this size: 64 MiB is some 200,000 findings. */
const MAX_BASELINE_BYTES = 64 * 1024 * 1024
/** A local image above this size is known by its size alone (the service takes none so large anyway). */
const MAX_HASHED_IMAGE_BYTES = 64 * 1024 * 1024
const FINGERPRINT = /^[0-9a-f]{32}$/u

/** One accepted finding. Only `fingerprint` is compared; the rest is there for the people who review the file. */
export type BaselineEntry = { fingerprint: string; document: string; rule: string; src: string | null; alt: string | null }
export type Baseline = { version: typeof BASELINE_VERSION; tool: typeof BASELINE_TOOL; findings: BaselineEntry[] }

/** Reads the bytes of a file, at most `max`; null when it cannot be read. */
function readBounded(path: string, max: number): { bytes: Uint8Array; size: number } | null {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return null
  }
  try {
    const { size } = fstatSync(fd)
    if (!Number.isFinite(size) || size > max) return { bytes: new Uint8Array(), size }
    const bytes = new Uint8Array(size)
    let at = 0
    while (at < size) {
      const read = readSync(fd, bytes, at, size - at, at)
      if (read === 0) break
      at += read
    }
    return { bytes: bytes.subarray(0, at), size }
  } catch {
    return null
  } finally {
    closeSync(fd)
  }
}

/** The baseline at `path` (shown as `shown` in messages); a UsageError when it is missing, too large or not a baseline. */
export function readBaseline(path: string, shown: string): Baseline {
  const read = readBounded(path, MAX_BASELINE_BYTES)
  if (read === null) throw new UsageError(`--baseline ${shown}: cannot be read (write one with --write-baseline ${shown})`)
  if (read.size > MAX_BASELINE_BYTES) throw new UsageError(`--baseline ${shown}: larger than ${MAX_BASELINE_BYTES / 1024 / 1024} MiB; not a baseline`)
  let data: unknown
  try {
    data = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(read.bytes))
  } catch (error) {
    throw new UsageError(`--baseline ${shown}: not JSON (${(error as Error).message})`)
  }
  const bad = (why: string) => new UsageError(`--baseline ${shown}: ${why}`)
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw bad(`not a baseline: expected {"version":${BASELINE_VERSION},"tool":"${BASELINE_TOOL}","findings":[...]}`)
  const file = data as Record<string, unknown>
  if (file.tool !== BASELINE_TOOL)
    throw bad(`a baseline of ${typeof file.tool === 'string' ? JSON.stringify(file.tool) : 'another tool'}, not of ${BASELINE_TOOL}`)
  if (file.version !== BASELINE_VERSION)
    throw bad(`version ${JSON.stringify(file.version ?? null)} is not one this alttext reads (${BASELINE_VERSION}); write it again with --write-baseline`)
  if (!Array.isArray(file.findings)) throw bad('"findings" is not a list')
  const findings: BaselineEntry[] = []
  for (const [index, entry] of file.findings.entries()) {
    const item = entry as Record<string, unknown> | null
    if (typeof item !== 'object' || item === null || typeof item.fingerprint !== 'string' || !FINGERPRINT.test(item.fingerprint))
      throw bad(`finding ${index + 1} has no fingerprint of 32 hex digits`)
    const text = (value: unknown) => (typeof value === 'string' ? value : null)
    findings.push({ fingerprint: item.fingerprint, document: text(item.document) ?? '', rule: text(item.rule) ?? '', src: text(item.src), alt: text(item.alt) })
  }
  return { version: BASELINE_VERSION, tool: BASELINE_TOOL, findings }
}

/** The baseline file's text: entries sorted by document and fingerprint, one per line, so a diff shows what changed. */
export function baselineText(entries: BaselineEntry[]): string {
  const sorted = [...entries].sort((a, b) => (a.document < b.document ? -1 : a.document > b.document ? 1 : a.fingerprint < b.fingerprint ? -1 : 1))
  const lines = sorted.map((entry) => `    ${JSON.stringify(entry)}`)
  return `{\n  "version": ${BASELINE_VERSION},\n  "tool": "${BASELINE_TOOL}",\n  "findings": [${lines.length > 0 ? `\n${lines.join(',\n')}\n  ` : ''}]\n}\n`
}

/**
 * What an image is, for its fingerprint: the hash of its bytes (a local file, an image in a book, a
 * data: URL), a remote image's address, or why it cannot be known. `files` caches a run's file hashes.
 */
export function pictureIdentity(target: ImageTarget | Unresolved, files: Map<string, string>): string {
  if ('data' in target) return `sha256:${createHash('sha256').update(target.data).digest('hex')}`
  if ('url' in target) return `url:${target.url}`
  if ('error' in target) return 'unresolved'
  let identity = files.get(target.file)
  if (identity === undefined) {
    const read = readBounded(target.file, MAX_HASHED_IMAGE_BYTES)
    identity =
      read === null
        ? 'unreadable'
        : read.size > MAX_HASHED_IMAGE_BYTES
          ? `size:${read.size}`
          : `sha256:${createHash('sha256').update(read.bytes).digest('hex')}`
    files.set(target.file, identity)
  }
  return identity
}

/** A document's name as the fingerprint takes it: "/" between folders on every system. */
const documentName = (page: string) => (sep === '/' ? page : page.split(sep).join('/'))

/**
 * The fingerprint of every finding that has a rule (`ruleOf`), by document. `identities` gives each
 * finding's picture identity (pictureIdentity, taken while the images could still be read).
 */
export function fingerprintFindings(
  pages: PageResult[],
  identities: Map<Finding, string>,
  ruleOf: (finding: Finding) => SarifRuleKind | null = lintRule,
): Map<Finding, BaselineEntry> {
  const out = new Map<Finding, BaselineEntry>()
  for (const page of pages) {
    const document = documentName(page.page)
    const seen = new Map<string, number>()
    for (const finding of page.images) {
      const kind = ruleOf(finding)
      if (kind === null) continue
      const rule = SARIF_RULES[kind].id
      const same = JSON.stringify([rule, finding.src, identities.get(finding) ?? 'unresolved', finding.attribute, finding.alt])
      const occurrence = (seen.get(same) ?? 0) + 1
      seen.set(same, occurrence)
      const fingerprint = createHash('sha256')
        .update(JSON.stringify([`alttext-baseline/${BASELINE_VERSION}`, document, same, occurrence]))
        .digest('hex')
        .slice(0, 32)
      out.set(finding, { fingerprint, document, rule, src: finding.src, alt: finding.alt })
    }
  }
  return out
}

/**
 * Marks each fingerprinted finding `unchanged` (in the baseline) or `new`. Each baseline entry accepts
 * one finding; the entries of `audited` documents left over are stale: fixed, or their image or text
 * changed (entries of documents this run did not read are neither).
 */
export function compareWithBaseline(
  baseline: Baseline,
  fingerprinted: Map<Finding, BaselineEntry>,
  audited: PageResult[],
): { accepted: number; new: number; stale: number } {
  const read = new Set(audited.map((page) => documentName(page.page)))
  const left = new Set(baseline.findings.filter((entry) => read.has(entry.document)).map((entry) => entry.fingerprint))
  const known = new Set(baseline.findings.map((entry) => entry.fingerprint))
  let accepted = 0
  let fresh = 0
  for (const [finding, entry] of fingerprinted) {
    finding.fingerprint = entry.fingerprint
    if (known.has(entry.fingerprint)) {
      left.delete(entry.fingerprint)
      finding.baseline = 'unchanged'
      accepted++
    } else {
      finding.baseline = 'new'
      fresh++
    }
  }
  return { accepted, new: fresh, stale: left.size }
}
