// The write-behind buffer of the activity counts and the history: when it writes (on its timer, at a size,
// at stop), that a failed write is logged and kept, and that nothing gathered is lost at stop. Time is a
// manual scheduler: nothing here waits for a real timer.
import { describe, expect, test } from 'bun:test'
import { createLogger } from '../../src/shared/logger'
import { createWriteBehind, type WriteBehindOptions } from '../../src/shared/write-behind'
import { createManualScheduler, type ManualScheduler } from '../support/scheduler'

type Batch = number[]

/** A buffer of numbers over a store the test controls: `fail` makes writes reject, `hold` keeps them pending. */
function buffer(options: Partial<WriteBehindOptions<Batch>> & { scheduler?: ManualScheduler } = {}) {
  const scheduler = options.scheduler ?? createManualScheduler()
  const lines: { level: string; msg: string; [field: string]: unknown }[] = []
  const written: Batch[] = []
  const store = {
    fail: false as boolean | 'throw',
    hold: null as Promise<void> | null,
    writes: 0,
    /** Writes under way now, and the most there ever were at once. */
    active: 0,
    mostActive: 0,
  }
  const wb = createWriteBehind<Batch>({
    name: 'numbers',
    contents: 'the numbers',
    logger: createLogger((line) => lines.push(JSON.parse(line))),
    scheduler,
    flushEveryMs: 1000,
    empty: () => [],
    isEmpty: (batch) => batch.length === 0,
    async write(batch) {
      store.writes++
      store.mostActive = Math.max(store.mostActive, ++store.active)
      try {
        if (store.hold) await store.hold
        if (store.fail) throw new Error('the database is locked')
        written.push([...batch])
      } finally {
        store.active--
      }
    },
    putBack: (failed, gathered) => [...failed, ...gathered],
    unsaved: (batch) => ({ numbers: batch.length }),
    ...options,
  })
  const add = (...values: number[]) => {
    wb.pending.push(...values)
    wb.added()
  }
  return { wb, scheduler, lines, written, store, add }
}

describe('write-behind buffer', () => {
  test('writes what was gathered once a flush interval has passed, in one batch, and nothing before', async () => {
    const { scheduler, written, store, add } = buffer()
    add(1, 2)
    add(3)
    await scheduler.advance(999)
    expect(written).toEqual([])
    await scheduler.advance(1)
    expect(written).toEqual([[1, 2, 3]])
    // An empty interval writes nothing.
    await scheduler.advance(1000)
    expect(store.writes).toBe(1)
    add(4)
    await scheduler.advance(1000)
    expect(written).toEqual([[1, 2, 3], [4]])
  })

  test('writes at once when the gathered batch reaches its size, before the interval', async () => {
    const { scheduler, written, add } = buffer({ size: (batch) => batch.length, flushAtSize: 3 })
    add(1, 2)
    await scheduler.settle()
    expect(written).toEqual([])
    add(3)
    await scheduler.settle()
    expect(written).toEqual([[1, 2, 3]])
  })

  test('stop writes what is left and stops the timer', async () => {
    const { wb, scheduler, written, store, add } = buffer()
    add(1)
    await wb.stop()
    expect(written).toEqual([[1]])
    expect(scheduler.pending()).toBe(0)
    await scheduler.advance(5000)
    expect(store.writes).toBe(1)
  })

  test('no write is lost at stop: what arrives while a write is under way is written after it, one write at a time', async () => {
    const { wb, written, store, add } = buffer()
    let release!: () => void
    store.hold = new Promise<void>((resolve) => {
      release = resolve
    })
    add(1)
    const first = wb.flush()
    expect(wb.writing).toEqual([1])
    add(2)
    const stopped = wb.stop()
    release()
    await Promise.all([first, stopped])
    expect(written).toEqual([[1], [2]])
    expect(store.mostActive).toBe(1)
    expect(wb.pending).toEqual([])
  })

  test('a failed write is logged, not thrown; the batch goes back in front and is written by the next flush', async () => {
    const { wb, scheduler, lines, written, store, add } = buffer()
    store.fail = true
    add(1)
    await scheduler.advance(1000)
    add(2)
    // Rejected or thrown at once: both are failures of the write, neither reaches the caller.
    store.fail = 'throw'
    await expect(wb.flush()).resolves.toBeUndefined()
    expect(wb.pending).toEqual([1, 2])
    const warnings = lines.filter((line) => line.level === 'warn')
    // Failures in a row warn once (a minute apart at most).
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({ msg: 'numbers flush failed; the numbers stay in memory and are retried', error: 'the database is locked' })

    store.fail = false
    await scheduler.advance(1000)
    expect(written).toEqual([[1, 2]])
    expect(lines.at(-1)).toMatchObject({ level: 'info', msg: 'numbers flush succeeded again', failed_flushes: 2 })
  })

  test('a write that throws synchronously is a failure like any other', async () => {
    const { wb, lines, add } = buffer({
      write: () => {
        throw new Error('no connection')
      },
    })
    add(7)
    await expect(wb.flush()).resolves.toBeUndefined()
    expect(wb.pending).toEqual([7])
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1)
  })

  test('warns again a minute after the last warning while writes keep failing', async () => {
    const { scheduler, lines, store, add } = buffer()
    store.fail = true
    add(1)
    // The first failure (at 1 s) warns; the next 59 do not.
    await scheduler.advance(60_000)
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1)
    await scheduler.advance(1000)
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(2)
  })

  test('stop says loudly what it could not save when the last write fails too', async () => {
    const { wb, lines, store, add } = buffer()
    store.fail = true
    add(1, 2)
    await wb.stop()
    expect(lines.at(-1)).toMatchObject({ level: 'error', msg: 'numbers not saved at shutdown: the database refused the last write', numbers: 2 })
  })
})
