// `alttext audit --judge`: every alt text that passes the lint is sent to POST /api/alt-text/review with
// the text around the image as context, so a human "boat" on a photo of a busy harbour can still be
// flagged. A verdict other than ok turns the finding into a poor one with the verdict and its reasons as
// its issue and the suggested alt as its suggestion, which --fix then writes like any other.
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { VERSION } from '../../version'
import { type AltTextOptions, createClient, type ImageInput, stopReason } from '../shared/client'
import type { Sink } from '../shared/io'
import { createProgress } from '../shared/progress'
import type { RunControl } from '../shared/run-control'
import { contextFor } from './classify'
import type { ScannedDocument } from './formats'
import type { ImageTarget, LoadedPage } from './pages'
import type { Finding, PageResult } from './report'
import type { PageScan } from './scan'

export type JudgeRun = {
  url: string
  key: string
  /** Sent with every request (the page's language is added per page). */
  options: AltTextOptions
  concurrency: number
  quiet: boolean
  /** Where the progress goes (the command's stderr), and its clock. */
  stderr: Sink
  clock: () => number
  /** The run's: its signal, and its stop when a failure means no other request can succeed (no credit, key refused). */
  control: RunControl
}

type Judged = { label: string; target: ImageTarget; alt: string; options: AltTextOptions; findings: Finding[] }

/** Whether a finding's alt text is one to judge: a text that passed the lint. */
const judgeable = (finding: Finding) => finding.status === 'ok' && finding.alt !== null && finding.alt.trim() !== ''

/** Asks for a verdict on every alt text that passed the lint; returns how many requests failed. */
export async function judgeAltTexts(
  works: { page: LoadedPage; result: PageResult; scan: PageScan | null; document: ScannedDocument | null }[],
  run: JudgeRun,
): Promise<number> {
  const tasks = new Map<string, Judged>()
  // A book's image used many times comes back as the same bytes: hashed once.
  const digests = new WeakMap<Uint8Array, string>()
  const digestOf = (data: Uint8Array) => {
    let digest = digests.get(data)
    if (digest === undefined) {
      digest = createHash('sha256').update(data).digest('hex')
      digests.set(data, digest)
    }
    return digest
  }
  for (const { result, scan, document } of works) {
    if (!scan || !document) continue
    for (const [index, image] of scan.images.entries()) {
      const finding = result.images[index]!
      if (!judgeable(finding)) continue
      // As the document's format resolves it: a book's images come from inside the book only.
      const target = document.resolve(image.src, image)
      if ('error' in target) continue
      const link = image.link ? document.linkTarget(image.link.href) : null
      const options: AltTextOptions = { ...run.options, language: result.language, context: contextFor(scan, image, link) || undefined }
      const alt = finding.alt!.trim()
      const where = 'data' in target ? digestOf(target.data) : 'file' in target ? target.file : target.url
      const key = JSON.stringify([where, alt, options])
      const task = tasks.get(key)
      if (task) task.findings.push(finding)
      else tasks.set(key, { label: `${result.page}:${image.line} judge`, target, alt, options, findings: [finding] })
    }
  }
  if (tasks.size === 0) return 0

  const progress = createProgress({ stream: run.stderr, quiet: run.quiet, noun: 'verdict', now: run.clock })
  const client = createClient({ url: run.url, key: run.key, userAgent: `alttext-cli/${VERSION} (audit --judge)` })
  const todo = [...tasks.values()]
  progress.start(todo.length, 0)
  let temporary: string | undefined
  let next = 0
  const worker = async () => {
    while (run.control.stopping === undefined && next < todo.length) {
      const task = todo[next++]!
      let input: ImageInput
      if ('data' in task.target) {
        temporary ??= mkdtempSync(join(tmpdir(), 'alttext-judge-'))
        const file = join(temporary, String(next))
        writeFileSync(file, task.target.data)
        input = { file }
      } else input = 'file' in task.target ? { file: task.target.file } : { url: task.target.url }
      const outcome = await client.review(input, task.alt, task.options, run.control.signal)
      if (!outcome.ok) {
        if (outcome.code === 'aborted') continue
        for (const finding of task.findings) finding.error = `judge: ${outcome.code}: ${outcome.message}`
        progress.item(task.label, { ok: false, detail: `${outcome.code}: ${outcome.message}` })
        const reason = stopReason(outcome.status, outcome.code)
        if (reason !== undefined && run.control.stop(reason)) progress.note(`stopping: ${reason}`)
        continue
      }
      const { verdict, reasons, suggested_alt_text: suggested, cached } = outcome.body
      for (const finding of task.findings) {
        finding.verdict = { verdict, reasons, suggested_alt_text: suggested, cached }
        if (verdict === 'ok') continue
        finding.status = 'poor'
        finding.issues = [`judge: ${verdict}${reasons ? ` (${reasons})` : ''}`]
        finding.suggestion = {
          alt: suggested ?? '',
          decorative: verdict === 'decorative',
          decorative_reason: verdict === 'decorative' ? reasons : null,
          wcag_issues: [],
          cached,
          local: false,
        }
      }
      progress.item(task.label, { ok: true, note: [verdict, cached && 'cached'].filter(Boolean).join(', ') })
    }
  }
  try {
    await Promise.all(Array.from({ length: Math.min(run.concurrency, todo.length) }, worker))
  } finally {
    if (temporary) rmSync(temporary, { recursive: true, force: true })
  }
  const summary = progress.finish()
  return summary.total - summary.done
}
