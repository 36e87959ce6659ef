// `alttext audit`: reads pages (files, folders, URLs; --crawl follows same-origin links), finds the
// images that need alt text, asks a running alttext for it (`--concurrency` requests in flight, through
// the shared client's back-off), writes the report and, with --fix, copies of the pages with the new
// attributes. The run owns its signal handlers, the progress reporter and a temporary folder for the
// images of data: URLs: each is set up here and removed before it returns.
import { createHash, randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { ConfigError, loadClientConfig } from '../../config'
import { plural } from '../../shared/wording'
import { VERSION } from '../../version'
import { EXIT, UsageError } from '../shared/args'
import { type AltTextOptions, createClient, type ImageInput, stopReason } from '../shared/client'
import type { CommandIo } from '../shared/io'
import { createProgress } from '../shared/progress'
import { classify, contextFor, type LintCache, isLinkOnly, pageLanguage, suggestionWithoutModel } from './classify'
import { type Baseline, baselineText, compareWithBaseline, fingerprintFindings, pictureIdentity, readBaseline } from './baseline'
import { checkExitCode, checkLines, checkSummary, NOT_CHECKED_CODES, unreadableImage } from './check'
import { type Exclusion, exclusion } from './exclude'
import { judgeAltTexts } from './judge'
import { HELP, parseAuditArgs } from './options'
import { type AltChange, formatFor, type ScannedDocument } from './formats'
import { skippedLines } from './crawl/report'
import { type SiteAccess, siteAccessFor } from './crawl/site'
import { auditedOrigins, collectSources, displayPath, fixPath, type ImageTarget, type LoadedPage, loadPages } from './pages'
import {
  type Finding,
  NEEDS_ALT,
  type PageResult,
  type Report,
  type Totals,
  reportCsv,
  reportHtml,
  reportJson,
  TOOL,
  totalsOf,
  wantsSuggestion,
} from './report'
import { queuedLine, queueEntries, rowsFromQueue } from './queue'
import { applyRows, normaliseAlt, reviewCsv, reviewEntries, runApply } from './review'
import { sarifLog } from './sarif'
import { createRenderer, type Renderer } from './render'
import type { PageScan } from './scan'
import { createRunControl } from '../shared/run-control'
import { writeFileSafely } from './write'
import { diffWith, evidenceOf, prepareEvidenceDir, readPreviousSummary, writeEvidence } from './evidence'
import type { Summary } from './evidence/summary'

/** 128 + SIGINT, as shells report a command stopped by Ctrl-C. */
const EXIT_INTERRUPTED = 130

/** A document read and scanned (a page, or one content document of a book): its result row, and what --fix needs. */
type PageWork = { page: LoadedPage; result: PageResult; scan: PageScan | null; document: ScannedDocument | null }

/** One request: every finding that asked the same thing of the same image shares its answer. */
type Task = { label: string; target: ImageTarget; options: AltTextOptions; findings: Finding[] }

/** What identifies an image to send; `digests` holds the hash of each data buffer (a book's image used many times is hashed once). */
const targetKey = (target: ImageTarget, digests: WeakMap<Uint8Array, string>) => {
  if ('file' in target) return `file:${target.file}`
  if ('url' in target) return `url:${target.url}`
  let digest = digests.get(target.data)
  if (digest === undefined) {
    digest = createHash('sha256').update(target.data).digest('hex')
    digests.set(target.data, digest)
  }
  return `data:${digest}`
}

const targetLabel = (target: ImageTarget, cwd: string) => ('file' in target ? displayPath(target.file, cwd) : 'url' in target ? target.url : 'data: URL')

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const fail = (message: string, code: number = EXIT.usage): number => {
    io.stderr.write(`alttext audit: ${message}${code === EXIT.usage ? '\nRun `alttext audit --help` for the options.' : ''}\n`)
    return code
  }
  const { cwd } = io
  let settings: ReturnType<typeof parseAuditArgs>
  let config: ReturnType<typeof loadClientConfig> | undefined
  let sources: Awaited<ReturnType<typeof collectSources>>
  let previous: Summary | null = null
  let site: SiteAccess
  // --render: the run's one browser, closed in the finally below.
  let renderer: Renderer | undefined
  let exclude: Exclusion
  let baseline: Baseline | null = null
  let excluded = 0
  try {
    settings = parseAuditArgs(argv, cwd)
    if (settings === 'help') {
      io.stdout.write(`${HELP}\n`)
      return EXIT.ok
    }
    if (settings.apply !== undefined) {
      const apply = settings.apply
      return runApply(
        { ...settings, apply },
        cwd,
        (line) => io.stdout.write(`${line}\n`),
        (line) => io.stderr.write(`${line}\n`),
      )
    }
    if (settings.fromQueue) {
      const service = loadClientConfig(io.env, { url: settings.url, key: settings.key })
      return await applyFromQueue(service, settings, io)
    }
    if (!settings.dryRun) config = loadClientConfig(io.env, { url: settings.url, key: settings.key })
    exclude = exclusion(
      settings.exclude,
      cwd,
      settings.inputs.filter((input) => !/^https?:\/\//iu.test(input)),
    )
    if (settings.baseline !== undefined) baseline = readBaseline(settings.baseline, displayPath(settings.baseline, cwd))
    sources = await collectSources(settings.inputs, settings.root, cwd)
    if (sources.length === 0) return fail(`no HTML, Markdown or EPUB files found in ${settings.inputs.join(', ')}`)
    const kept = sources.filter((source) => !(source.kind === 'file' ? exclude.file(source.path) : exclude.url(source.url)))
    excluded = sources.length - kept.length
    if (kept.length === 0) return fail(`--exclude left nothing to audit of ${settings.inputs.join(', ')}`)
    sources = kept
    site = siteAccessFor(settings.site, { auditedOrigins: auditedOrigins(sources), cwd, env: io.env, clock: io.clock })
    const fixDir = settings.fix
    if (fixDir !== undefined) {
      for (const source of sources) {
        if (source.kind === 'file' && resolve(join(fixDir, source.path.slice(source.root.length))) === source.path) {
          throw new UsageError(`--fix ${displayPath(fixDir, cwd)} is the site's own folder: the copies would replace the originals`)
        }
      }
    }
    // Checked before any page is read: a long run does not end in a folder it cannot write or a file that is no summary.
    if (settings.evidence !== undefined) prepareEvidenceDir(settings.evidence, cwd)
    if (settings.diff !== undefined) previous = readPreviousSummary(settings.diff, cwd)
    if (settings.render) renderer = await createRenderer({ env: io.env, gate: site.gate })
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) return fail(error.message)
    if (error instanceof Error && /^(?:no such file|not a URL)/u.test(error.message)) return fail(error.message)
    throw error
  }
  const out = settings
  // Human lines go to stderr when a report takes stdout.
  const say = (line: string) => (out.report === '-' || out.json === '-' || out.csv === '-' || out.sarif === '-' ? io.stderr : io.stdout).write(`${line}\n`)

  const control = createRunControl(io.interrupts, () =>
    io.stderr.write('interrupted: finishing the requests in flight, then writing the report (Ctrl-C again to stop at once)\n'),
  )
  let temporary: string | undefined

  try {
    // 1. Read and scan every page, before anything is sent.
    const token = `alttext-audit-${randomUUID()}`
    const lintCache: LintCache = new Map()
    const works: PageWork[] = []
    let scanMs = 0
    const started = performance.now()
    const crawled = await loadPages(sources, {
      crawl: out.crawl,
      maxPages: out.maxPages,
      sitemap: out.site.sitemap,
      site,
      cwd,
      signal: control.signal,
      onNote: (line) => out.quiet || io.stderr.write(`${line}\n`),
      fetchPage: renderer?.fetchPage,
      exclude: exclude.none ? undefined : (url) => exclude.url(url),
      onPage(page) {
        if (page.note !== undefined && !out.quiet) io.stderr.write(`note: ${page.name}: ${page.note}\n`)
        const resultFor = (name: string): PageResult => ({
          page: name,
          address: page.source.kind === 'file' ? page.source.path : page.source.url,
          error: page.error,
          language: out.language ?? 'en',
          fixed_copy: null,
          ignored: 0,
          images: [],
          ...(page.note !== undefined && { note: page.note }),
        })
        if (page.bytes === null) {
          works.push({ page, result: resultFor(page.name), scan: null, document: null })
          return []
        }
        const scanStarted = performance.now()
        let documents: ScannedDocument[]
        try {
          documents = formatFor(page.source).scan(page, { token, context: !out.dryRun })
        } catch (error) {
          const result = resultFor(page.name)
          result.error = `cannot parse: ${(error as Error).message}`
          works.push({ page, result, scan: null, document: null })
          return []
        }
        if (documents.length === 0) works.push({ page, result: resultFor(page.name), scan: null, document: null })
        // A book's content documents are excluded by "book.epub!OEBPS/ch1.xhtml".
        if (!exclude.none && page.source.kind === 'file') {
          const path = page.source.path
          const inBook = documents.filter((document) => !(document.name !== page.name && exclude.file(path, document.name.slice(page.name.length + 1))))
          excluded += documents.length - inBook.length
          documents = inBook
        }
        for (const document of documents) {
          const result = resultFor(document.name)
          const scan = document.scan
          result.ignored = scan.ignored
          const language = pageLanguage(out.language, scan)
          result.language = language
          for (const [index, image] of scan.images.entries()) {
            const { status, issues } = classify(scan, image, language, out.lintMaxLength, lintCache)
            result.images.push({
              line: image.line,
              column: document.locations[index]!.column,
              kind: image.kind,
              src: image.src?.startsWith('data:') ? `${image.src.slice(0, image.src.indexOf(',') + 1)}… (${image.src.length} characters)` : image.src,
              resolved: null,
              attribute: image.textAttribute,
              alt: image.text,
              status,
              issues,
              suggestion: null,
              error: null,
              not_checked: image.unchecked ?? null,
              written: null,
            })
          }
          works.push({ page, result, scan, document })
        }
        scanMs += performance.now() - scanStarted
        const links = documents.flatMap((document) => document.scan.links)
        // Excluded URL paths are not followed either.
        if (exclude.none || page.source.kind !== 'url') return links
        return links.filter((href) => {
          try {
            return !exclude.url(new URL(href.trim(), page.base).href)
          } catch {
            return true
          }
        })
      },
    })
    const readMs = performance.now() - started
    excluded += crawled.excluded
    if (renderer && !out.quiet) {
      const rendered = renderer.stats()
      io.stderr.write(`rendered ${plural(rendered.pages, 'page')} in Chromium; ${plural(rendered.refused, 'request')} refused and not sent\n`)
    }
    const files = works.filter((work) => work.page.source.kind === 'file')
    const urls = works.filter((work) => work.page.source.kind === 'url').sort((a, b) => order(a.page) - order(b.page) || (a.page.name < b.page.name ? -1 : 1))
    const ordered = [...files, ...urls]
    const scanned = totalsOf(ordered.map((work) => work.result))
    if (!out.quiet) {
      io.stderr.write(
        `read ${plural(scanned.pages, 'page')} in ${Math.round(readMs)} ms (parsing ${Math.round(scanMs)} ms): ${plural(scanned.images, 'image')}, ` +
          `${scanned.missing} missing, ${scanned.empty} empty, ${scanned.poor} poor, ${scanned.ok} good, ${longCount(scanned)}${scanned.decorative} decorative` +
          `${scanned.pages_failed > 0 ? `; ${plural(scanned.pages_failed, 'page')} could not be read` : ''}${crawled.unfollowed > 0 ? `; ${plural(crawled.unfollowed, 'link')} not followed (--max-pages)` : ''}` +
          `${skippedLines(crawled).summary}\n`,
      )
      for (const line of skippedLines(crawled).lines) io.stderr.write(`${line}\n`)
    }

    // 2. What to ask: one task per distinct image and request.
    const tasks = new Map<string, Task>()
    const digests = new WeakMap<Uint8Array, string>()
    // What each image is, for the fingerprints of --baseline, --write-baseline and --sarif (baseline.ts),
    // taken now: a book's images can be read only until its entries are let go.
    const fingerprinting = out.baseline !== undefined || out.writeBaseline !== undefined || out.sarif !== undefined
    const identities = new Map<Finding, string>()
    const identityCache = new Map<string, string>()
    const unreadable = new Map<string, string | null>()
    let notCheckedTasks = 0
    for (const work of ordered) {
      const scan = work.scan
      const document = work.document
      if (!scan || !document) continue
      for (const [index, image] of scan.images.entries()) {
        const finding = work.result.images[index]!
        const wanted = wantsSuggestion(finding.status, out.overwrite) && (NEEDS_ALT.has(finding.status) || image.text !== null)
        const where = document.resolve(image.src, image)
        if (fingerprinting) identities.set(finding, pictureIdentity(where, identityCache))
        if (!wanted) {
          // Where the image is, for the report's preview.
          if ('file' in where) finding.resolved = where.file
          else if ('url' in where) finding.resolved = where.url
          continue
        }
        const local = suggestionWithoutModel(scan, image)
        if (local !== null) {
          finding.suggestion = {
            alt: local,
            decorative: true,
            decorative_reason: 'the link’s own text names the target',
            wcag_issues: [],
            cached: false,
            local: true,
          }
          continue
        }
        const target = where
        // A picture to be described that cannot be read is "not checked" (listed, never a failure by
        // itself; --check says so too): a missing or unreadable local file, or a template address.
        if ('file' in target) finding.not_checked = unreadableImage(target.file, displayPath(target.file, cwd), unreadable)
        else if ('error' in target && target.unseen) finding.not_checked = target.error
        if ('error' in target) {
          // An image the model cannot see (a template address): the lint's finding stands, with why nothing was asked.
          if (target.unseen) finding.issues.push(target.error)
          else finding.error = target.error
          continue
        }
        finding.resolved = 'data' in target ? 'data: URL' : 'file' in target ? target.file : target.url
        if (out.dryRun || finding.not_checked !== null) continue
        const link = image.link ? document.linkTarget(image.link.href) : null
        const options: AltTextOptions = {
          ...out.options,
          language: work.result.language,
          context: contextFor(scan, image, link) || undefined,
          // A link's only content names the link: never decorative. role=img is named by aria-label.
          detect_decorative: !isLinkOnly(scan, image) && image.kind !== 'role-img',
        }
        const key = JSON.stringify([targetKey(target, digests), options])
        const task = tasks.get(key)
        if (task) task.findings.push(finding)
        else tasks.set(key, { label: `${work.result.page}:${image.line} ${targetLabel(target, cwd)}`, target, options, findings: [finding] })
      }
    }

    // 3. Ask.
    let summaryFailed = 0
    if (!out.dryRun && config && tasks.size > 0) {
      const progress = createProgress({ stream: io.stderr, quiet: out.quiet, noun: 'image', now: io.clock })
      let waitNotedUntil = 0
      const client = createClient({
        url: config.url,
        key: config.key,
        userAgent: `alttext-cli/${VERSION} (audit)`,
        onWait: ({ seconds, code }) => {
          if (io.clock() < waitNotedUntil) return
          waitNotedUntil = io.clock() + seconds * 1000
          progress.note(`waiting ${seconds} s (${code}) before sending again`)
        },
      })
      const usage = await client.usage(control.signal)
      if (!usage.ok) {
        const why = usage.status === 0 ? usage.message : `${config.url} answered ${usage.status} ${usage.code}: ${usage.message}`
        return fail(`${why}\nNothing was sent. Check --url/ALTTEXT_URL and --key/ALTTEXT_API_KEY.`)
      }
      const todo = [...tasks.values()]
      progress.start(todo.length, 0)
      if (usage.remaining < todo.length) {
        progress.note(
          `note: ${plural(todo.length, 'image')} to ask for and ${plural(usage.remaining, 'credit')} left; cached answers are free, the run stops when credits run out`,
        )
      }
      let next = 0
      const worker = async () => {
        while (control.stopping === undefined && next < todo.length) {
          const task = todo[next++]!
          let input: ImageInput
          if ('data' in task.target) {
            temporary ??= mkdtempSync(join(tmpdir(), 'alttext-audit-'))
            const file = join(temporary, targetKey(task.target, digests).slice(5))
            writeFileSync(file, task.target.data)
            input = { file }
          } else input = 'file' in task.target ? { file: task.target.file } : { url: task.target.url }
          const outcome = await client.describeImage(input, task.options, control.signal)
          if (outcome.ok) {
            const body = outcome.body
            const suggestion = {
              alt: body.alt_text,
              decorative: body.decorative,
              decorative_reason: body.decorative_reason,
              wcag_issues: body.wcag_issues,
              cached: body.cached,
              ...(body.long_description != null && { long_description: body.long_description }),
              local: false,
            }
            for (const finding of task.findings) finding.suggestion = suggestion
            progress.item(task.label, { ok: true, note: [body.cached && 'cached', body.decorative && 'decorative'].filter(Boolean).join(', ') })
            continue
          }
          if (outcome.code === 'aborted') continue
          const notChecked = NOT_CHECKED_CODES.has(outcome.code)
          if (notChecked) notCheckedTasks++
          for (const finding of task.findings) {
            finding.error = `${outcome.code}: ${outcome.message}`
            if (notChecked) finding.not_checked = `the service could not read it (${outcome.code}: ${outcome.message})`
          }
          progress.item(task.label, { ok: false, detail: `${outcome.code}: ${outcome.message}` })
          const reason = stopReason(outcome.status, outcome.code)
          if (reason !== undefined && control.stop(reason)) {
            progress.note(`stopping: ${reason}`)
          }
        }
      }
      await Promise.all(Array.from({ length: Math.min(out.concurrency, todo.length) }, worker))
      const summary = progress.finish()
      summaryFailed = summary.total - summary.done - notCheckedTasks
      for (const task of todo)
        for (const finding of task.findings) if (!finding.suggestion && !finding.error) finding.error = `not asked: ${control.stopping ?? 'stopped'}`
    }

    // 3b. --judge: a verdict on each alt text that passed the lint.
    if (out.judge && config && control.stopping === undefined) {
      summaryFailed += await judgeAltTexts(ordered, {
        url: config.url,
        key: config.key,
        options: out.options,
        concurrency: out.concurrency,
        quiet: out.quiet,
        stderr: io.stderr,
        clock: io.clock,
        control,
      })
    }

    // 3c. --review --queue: what the CSV would list, as suggestions (before the books' entries are let go).
    let queued: Awaited<ReturnType<typeof queueEntries>> | null = null
    if (out.queue && config && control.stopping === undefined) {
      const entries = ordered.flatMap((work) => reviewEntries([work], out.overwrite).entries.map((entry) => ({ entry, language: work.result.language })))
      queued = await queueEntries(entries, { service: config, maxLength: out.options.max_length, concurrency: out.concurrency, cwd }, (line) =>
        io.stderr.write(`${line}\n`),
      )
    }

    // Every image is sent: what was kept to send them (a book's inflated entries) can go.
    tasks.clear()
    for (const work of ordered) work.document?.release?.()

    // 4. --fix: copies with only the alt texts written (a book's documents make one copy).
    if (out.fix !== undefined) {
      const byPage = new Map<LoadedPage, PageWork[]>()
      for (const work of ordered) if (work.page.bytes !== null && work.document !== null) byPage.set(work.page, [...(byPage.get(work.page) ?? []), work])
      for (const [page, pageWorks] of byPage) {
        const target = fixPath(page, out.fix)
        if (target === null) {
          for (const work of pageWorks) work.result.error = 'no safe place for its copy under --fix'
          continue
        }
        const changes = new Map<AltChange, Finding>()
        for (const work of pageWorks) {
          for (const [index, image] of work.document!.scan.images.entries()) {
            const finding = work.result.images[index]!
            const wanted = wantsSuggestion(finding.status, out.overwrite)
            const suggestion = finding.suggestion
            if (!wanted || !suggestion) continue
            finding.written = false
            const alt = normaliseAlt(suggestion.alt)
            if (alt === (image.text ?? null)) continue
            if (alt === '' && image.textAttribute !== 'alt') continue
            changes.set({ ...work.document!.locations[index]!, alt, longDescription: suggestion.long_description }, finding)
          }
        }
        let written: Uint8Array
        try {
          const documents = pageWorks.map((work) => work.document!)
          const outcome = formatFor(page.source).apply(page, [...changes.keys()], { token, context: false, documents })
          for (const change of outcome.applied) changes.get(change)!.written = true
          written = outcome.bytes
        } catch (error) {
          for (const work of pageWorks) work.result.error = `cannot write its copy: ${(error as Error).message}`
          continue
        }
        try {
          writeFileSafely(target, written, out.fix, cwd)
        } catch (error) {
          for (const work of pageWorks) work.result.error = `cannot write its copy: ${(error as Error).message}`
          continue
        }
        for (const work of pageWorks) work.result.fixed_copy = target
      }
    }

    // 5. Reports.
    const pages = ordered.map((work) => work.result)
    // Fingerprints; with --baseline each finding is accepted or new (without it, --write-baseline's own file is the baseline).
    const fingerprinted = fingerprinting ? fingerprintFindings(pages, identities) : new Map()
    for (const [finding, entry] of fingerprinted) finding.fingerprint = entry.fingerprint
    const written = out.writeBaseline === undefined ? null : { version: 1 as const, tool: 'alttext' as const, findings: [...fingerprinted.values()] }
    const judgedBy = baseline ?? written
    const baselineOutcome = judgedBy === null ? null : compareWithBaseline(judgedBy, fingerprinted, pages)
    const report: Report = {
      tool: TOOL,
      created_at: new Date(io.clock()).toISOString(),
      service: config?.url ?? null,
      dry_run: out.dryRun,
      overwrite: out.overwrite,
      timings: { read_ms: Math.round(readMs), parse_ms: Math.round(scanMs) },
      totals: { ...totalsOf(pages), excluded },
      ...(baselineOutcome && out.baseline !== undefined ? { baseline: { file: displayPath(out.baseline, cwd), ...baselineOutcome } } : {}),
      ...((out.site.sitemap || out.crawl > 0) && {
        crawl: { skipped: crawled.skipped, skipped_count: crawled.skippedCount, duplicates: crawled.duplicates, unfollowed: crawled.unfollowed },
      }),
      pages,
    }
    const write = (path: string, text: string) => {
      if (path === '-') io.stdout.write(text)
      else {
        mkdirSync(dirname(path), { recursive: true })
        writeFileSync(path, text)
      }
    }
    if (out.report) write(out.report, reportHtml(report, out.report === '-' ? join(cwd, 'report.html') : out.report))
    if (out.json) write(out.json, reportJson(report))
    if (out.csv) write(out.csv, reportCsv(report))
    // The gate's outputs (check.ts, sarif.ts, review.ts).
    if (out.sarif)
      write(
        out.sarif,
        sarifLog(
          ordered.map((work) => ({
            source: work.page.source,
            result: work.result,
            ...(work.result.page !== work.page.name && { inner: work.result.page.slice(work.page.name.length + 1) }),
          })),
          { cwd, baseline: judgedBy !== null },
        ),
      )
    if (out.writeBaseline !== undefined && written !== null) {
      try {
        writeFileSafely(out.writeBaseline, new TextEncoder().encode(baselineText(written.findings)), dirname(out.writeBaseline), cwd)
      } catch (error) {
        return fail(`--write-baseline ${displayPath(out.writeBaseline, cwd)}: ${(error as Error).message}`, EXIT.failed)
      }
    }
    const review = out.review === undefined ? null : reviewCsv(ordered, out.overwrite, cwd)
    if (out.review && review) write(out.review, review.text)
    if (out.check && !out.quiet) for (const line of checkLines(pages)) say(line)

    const { totals } = report
    say(
      `${plural(totals.pages, 'page')}, ${plural(totals.images, 'image')}: ${totals.needing_alt} ${totals.needing_alt === 1 ? 'needs' : 'need'} alt text (${totals.missing} missing, ${totals.empty} empty, ${totals.poor} poor), ` +
        `${totals.ok} good, ${longCount(totals)}${totals.decorative} decorative${gateCounts(totals)}`,
    )
    if (!out.dryRun) say(`${totals.suggested} suggested (${totals.suggested_decorative} decorative), ${totals.failed} failed`)
    if (out.report && out.report !== '-') say(`report: ${displayPath(out.report, cwd)}`)
    if (out.fix !== undefined) say(`fixed copies: ${displayPath(out.fix, cwd)} (${plural(totals.written, 'attribute')} written)`)
    if (out.review && review) {
      const left = review.urlPages > 0 ? `; ${plural(review.urlPages, 'page URL')} left out (--apply writes files)` : ''
      say(`review: ${displayPath(out.review, cwd)} (${plural(review.rows, 'proposed change')}${left}); edit or delete rows, then --apply it`)
    }
    if (queued && config) say(queuedLine(config, queued))
    if (out.writeBaseline !== undefined && written !== null)
      say(`baseline: ${displayPath(out.writeBaseline, cwd)} (${plural(written.findings.length, 'finding')} accepted; commit it)`)

    // 6. --evidence and --diff (evidence/): the pack, and what got worse since an older run's summary.
    let regressions: number | null = null
    let diffLines: string[] = []
    if (out.evidence !== undefined || previous !== null) {
      const run = { report, inputs: out.inputs, check: out.check, flags: { url: out.url, key: out.key }, env: io.env, cwd }
      const { summary, reviewLog } = await evidenceOf(run, out.evidence !== undefined)
      if (out.evidence !== undefined && reviewLog) {
        try {
          for (const line of writeEvidence(out.evidence, run, summary, reviewLog)) say(line)
        } catch (error) {
          io.stderr.write(`alttext audit: --evidence ${displayPath(out.evidence, cwd)}: cannot write the pack: ${(error as Error).message}\n`)
          return EXIT.failed
        }
      }
      if (previous !== null) {
        const diffed = diffWith(previous, summary, displayPath(out.diff!, cwd))
        diffLines = diffed.lines
        regressions = diffed.diff.regressions.length
      }
    }
    if (out.check) say(checkSummary(totals, report.baseline))
    for (const line of diffLines) say(line)
    if (out.check && regressions !== null)
      say(regressions > 0 ? 'gate (--check --diff): failed: something got worse' : 'gate (--check --diff): passed: nothing got worse')

    if (control.interrupted) return EXIT_INTERRUPTED
    // --check --diff: the gate fails on regressions only (a nightly audit that findings already known do not fail).
    if (out.check && regressions !== null) return regressions > 0 ? EXIT.failed : EXIT.ok
    if (out.check) return checkExitCode(totals)
    const failed = totals.pages_failed > 0 || summaryFailed > 0 || (!out.dryRun && totals.failed > 0) || (queued !== null && queued.failed > 0)
    return failed ? EXIT.failed : EXIT.ok
  } finally {
    control.dispose()
    await renderer?.close()
    if (temporary) rmSync(temporary, { recursive: true, force: true })
  }
}

/** --apply --from-queue: the decided suggestions of the roots given, written as --apply writes a CSV's rows. */
async function applyFromQueue(
  service: { url: string; key: string },
  settings: Exclude<ReturnType<typeof parseAuditArgs>, 'help'>,
  io: CommandIo,
): Promise<number> {
  const { cwd } = io
  const roots = settings.inputs.length > 0 ? settings.inputs.map((input) => resolve(cwd, input)) : [settings.root!]
  let fetched: Awaited<ReturnType<typeof rowsFromQueue>>
  try {
    fetched = await rowsFromQueue(service, roots, cwd)
  } catch (error) {
    io.stderr.write(`alttext audit: --from-queue: ${(error as Error).message}\nNothing was written. Check --url/ALTTEXT_URL and --key/ALTTEXT_API_KEY.\n`)
    return EXIT.usage
  }
  const say = (line: string) => io.stdout.write(`${line}\n`)
  const count = fetched.rows.length + fetched.unread.length
  say(`${plural(count, 'decided suggestion')} of ${roots.map((root) => displayPath(root, cwd)).join(', ')} in the review queue`)
  return applyRows(fetched.rows, fetched.unread, { ...settings, noun: 'suggestion' }, cwd, say)
}

/** "3 long, " for the summaries when a person's alt text is over --max-length (kept, not a failure); else nothing. */
const longCount = (totals: Totals) => (totals.long > 0 ? `${totals.long} long (kept), ` : '')

/** ", 2 ignored; 1 not checked; 3 excluded" for the summary when there are any; else nothing. */
const gateCounts = (totals: Totals) =>
  `${totals.ignored > 0 ? `, ${totals.ignored} ignored` : ''}${totals.not_checked > 0 ? `; ${totals.not_checked} not checked` : ''}${totals.excluded > 0 ? `; ${plural(totals.excluded, 'document')} excluded` : ''}`

/** URL pages in the order of their depth, then address. */
const order = (page: LoadedPage) => (page.source.kind === 'url' ? page.source.depth : 0)
