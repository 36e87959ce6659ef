// A write-behind buffer: writes are gathered in memory and stored in one go, every flushEveryMs, when the
// gathered batch reaches flushAtSize, on flush() and at stop(), so a busy path costs no write of its own.
// One batch is written at a time. A batch that fails goes back in front of what was gathered since and is
// tried again with the next flush; the failure is logged (once a minute while it lasts), never thrown.
import type { Logger } from './logger'
import type { Scheduler } from './scheduler'

export type WriteBehindOptions<B> = {
  /** What the log lines call it ("activity", "history"). */
  name: string
  /** What stays in memory when a write fails, for the log ("the counts"). */
  contents: string
  logger: Logger
  scheduler: Scheduler
  flushEveryMs: number
  /** A new, empty batch. */
  empty(): B
  isEmpty(batch: B): boolean
  /** Stores a batch (one transaction). */
  write(batch: B): Promise<void>
  /** Puts a batch that could not be written back in front of `gathered` (gathered since); returns the pending batch. */
  putBack(failed: B, gathered: B): B
  /** Told of each batch stored, in the turn its write ended. */
  written?(batch: B): void
  /** The gathered batch's size and the size that flushes it at once (memory stays bounded between flushes). */
  size?(batch: B): number
  flushAtSize?: number
  /** What the error line at stop says of a batch left unsaved. */
  unsaved(batch: B): Record<string, unknown>
}

export type WriteBehind<B> = {
  /** The batch gathering writes now (replaced by a new one when a flush takes it). */
  readonly pending: B
  /** The batch being written, or null. */
  readonly writing: B | null
  /** The write under way, or null. */
  readonly flushing: Promise<void> | null
  /** Call after adding to `pending`: flushes at once when it reached flushAtSize. */
  added(): void
  /** Writes what is pending now (after a write under way). Never rejects. */
  flush(): Promise<void>
  /** Stops the timer and writes what is left; logs an error when the last write failed too. */
  stop(): Promise<void>
}

/** While writes keep failing (a locked database), one warning a minute is enough. */
const WARN_EVERY_MS = 60_000

export function createWriteBehind<B>(options: WriteBehindOptions<B>): WriteBehind<B> {
  const { logger, scheduler } = options
  let pending = options.empty()
  let writing: B | null = null
  let flushing: Promise<void> | null = null
  let sizeFlush = false
  let failedFlushes = 0
  let warnedAt = Number.NEGATIVE_INFINITY

  const failed = (error: unknown) => {
    failedFlushes++
    const now = scheduler.now()
    if (failedFlushes > 1 && now - warnedAt < WARN_EVERY_MS) return
    warnedAt = now
    const fields = error instanceof Error ? { error: error.message, detail: (error as { detail?: string }).detail } : { error: String(error) }
    logger.warn(`${options.name} flush failed; ${options.contents} stay in memory and are retried`, { ...fields, failed_flushes: failedFlushes })
  }

  const flush = async () => {
    while (flushing) await flushing
    if (options.isEmpty(pending)) return
    const batch = pending
    pending = options.empty()
    writing = batch
    let write: Promise<void>
    try {
      write = options.write(batch)
    } catch (error) {
      // A write that throws at once fails like one that rejects.
      write = Promise.reject(error)
    }
    flushing = write
      .then(
        () => {
          options.written?.(batch)
          if (failedFlushes > 0) logger.info(`${options.name} flush succeeded again`, { failed_flushes: failedFlushes })
          failedFlushes = 0
        },
        (error: unknown) => {
          pending = options.putBack(batch, pending)
          failed(error)
        },
      )
      .catch((error: unknown) => logger.error(`${options.name} flush failed unexpectedly`, { error: String(error) }))
      .finally(() => {
        writing = null
        flushing = null
      })
    await flushing
  }

  const timer = scheduler.setInterval(() => void flush(), options.flushEveryMs)

  return {
    get pending() {
      return pending
    },
    get writing() {
      return writing
    },
    get flushing() {
      return flushing
    },
    added() {
      if (sizeFlush || options.size === undefined || options.flushAtSize === undefined) return
      if (options.size(pending) < options.flushAtSize) return
      sizeFlush = true
      void flush().finally(() => {
        sizeFlush = false
      })
    },
    flush,
    async stop() {
      scheduler.clear(timer)
      await flush()
      // The last chance to write them: say so loudly rather than lose them quietly.
      if (!options.isEmpty(pending)) logger.error(`${options.name} not saved at shutdown: the database refused the last write`, options.unsaved(pending))
    },
  }
}
