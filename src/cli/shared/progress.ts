// Progress of a long client run on stderr (stdout stays free for results). On a terminal: one line
// redrawn in place, `[#####-----] 120/500 4.0/s ETA 1m35s 2 failed`, with failures printed above it.
// Otherwise (a pipe, a CI log): one plain line per finished item, which greps and tails well. `quiet`
// leaves only failures and the summary. The reporter owns its redraw timer: created by start(),
// cleared by finish().
import { plural } from '../../shared/wording'
import type { Sink } from './io'

/** Where progress goes: the command's stderr (a terminal when its isTTY says so), or a test's fake terminal. */
export type ProgressStream = Sink

export type ProgressOptions = {
  stream: ProgressStream
  quiet?: boolean
  /** The noun of the count, singular: "image" ("1 image", "2 images"). */
  noun: string
  /** Redraws of the terminal line per second at most (default 10). */
  redrawsPerSecond?: number
  now: () => number
}

export type ProgressSummary = { total: number; done: number; failed: number; skipped: number; seconds: number }

export type Progress = {
  /** `total` items to do in this run, `skipped` already done by an earlier run. */
  start(total: number, skipped: number): void
  /** One finished item: `label` names it (a path or URL), `detail` is the failure's message. */
  item(label: string, outcome: { ok: true; note?: string } | { ok: false; detail: string }): void
  /** A line that is no item's result (e.g. waiting for a rate limit). */
  note(message: string): void
  /** Stops redrawing, prints the summary and returns the counts. */
  finish(): ProgressSummary
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?'
  const whole = Math.max(0, Math.round(seconds))
  const h = Math.floor(whole / 3600)
  const m = Math.floor((whole % 3600) / 60)
  const s = whole % 60
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`
  if (m > 0) return `${m}m${String(s).padStart(2, '0')}s`
  return `${s}s`
}

export function createProgress(options: ProgressOptions): Progress {
  const { stream, noun } = options
  const now = options.now
  const tty = stream.isTTY === true && !options.quiet
  const redrawMs = 1000 / (options.redrawsPerSecond ?? 10)
  let total = 0
  let skipped = 0
  let done = 0
  let failed = 0
  let startedAt = now()
  let timer: ReturnType<typeof setInterval> | undefined
  let lineShown = false

  const rate = () => {
    const seconds = (now() - startedAt) / 1000
    return seconds > 0 ? done / seconds : 0
  }

  const barLine = () => {
    const perSecond = rate()
    const remaining = total - done
    const eta = perSecond > 0 ? formatDuration(remaining / perSecond) : '?'
    const counts = `${done}/${total} ${perSecond.toFixed(1)}/s ETA ${eta}${failed > 0 ? ` ${failed} failed` : ''}${skipped > 0 ? ` (${skipped} skipped)` : ''}`
    const columns = stream.columns ?? 80
    const width = Math.max(10, Math.min(40, columns - counts.length - 4))
    const filled = total > 0 ? Math.round((done / total) * width) : width
    return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${counts}`.slice(0, Math.max(20, columns - 1))
  }

  const draw = () => {
    stream.write(`\r\x1b[2K${barLine()}`)
    lineShown = true
  }

  /** A whole line, above the bar on a terminal. */
  const println = (text: string) => {
    if (tty && lineShown) stream.write('\r\x1b[2K')
    stream.write(`${text}\n`)
    if (tty) draw()
  }

  return {
    start(count, already) {
      total = count
      skipped = already
      startedAt = now()
      if (options.quiet) return
      if (tty) {
        draw()
        timer = setInterval(draw, redrawMs)
        timer.unref?.()
      } else {
        println(`${plural(total, noun)} to do${skipped > 0 ? `, ${skipped} already done (skipped)` : ''}`)
      }
    },
    item(label, outcome) {
      done++
      if (!outcome.ok) failed++
      if (!outcome.ok) println(`[${done}/${total}] failed ${label}: ${outcome.detail}`)
      else if (!tty && !options.quiet) println(`[${done}/${total}] ok ${label}${outcome.note ? ` (${outcome.note})` : ''}`)
    },
    note(message) {
      if (!options.quiet) println(message)
    },
    finish() {
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
      const seconds = (now() - startedAt) / 1000
      if (tty && lineShown) {
        draw()
        stream.write('\n')
      }
      const parts = [`${done - failed} done`, `${failed} failed`]
      if (skipped > 0) parts.push(`${skipped} skipped (done before)`)
      if (done < total) parts.push(`${total - done} not started`)
      stream.write(`${parts.join(', ')} in ${formatDuration(seconds)}\n`)
      return { total, done: done - failed, failed, skipped, seconds }
    },
  }
}
