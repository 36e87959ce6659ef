// The manual scheduler the tests move: timers run in order of their due time, each at its own moment,
// and only when the test advances past it.
import { expect, test } from 'bun:test'
import { pause } from '../../src/shared/scheduler'
import { createManualScheduler } from './scheduler'

test('advance runs due timers in order, each at its due time, intervals as often as they fall due', async () => {
  const scheduler = createManualScheduler(1_000)
  const ran: string[] = []
  scheduler.setTimeout(() => ran.push(`late@${scheduler.now()}`), 250)
  scheduler.setInterval(() => ran.push(`tick@${scheduler.now()}`), 100)
  scheduler.setTimeout(() => ran.push(`early@${scheduler.now()}`), 50)
  await scheduler.advance(99)
  expect(ran).toEqual(['early@1050'])
  await scheduler.advance(201)
  expect(ran).toEqual(['early@1050', 'tick@1100', 'tick@1200', 'late@1250', 'tick@1300'])
  expect(scheduler.now()).toBe(1_300)
  expect(scheduler.pending()).toBe(1)
})

test('a cleared timer never runs; work a timer starts settles before the next one runs', async () => {
  const scheduler = createManualScheduler(0)
  const ran: string[] = []
  const cleared = scheduler.setTimeout(() => ran.push('cleared'), 10)
  scheduler.clear(cleared)
  scheduler.setTimeout(() => {
    void Promise.resolve()
      .then(() => Promise.resolve())
      .then(() => ran.push('first, settled'))
  }, 20)
  scheduler.setTimeout(() => ran.push('second'), 20)
  await scheduler.advance(20)
  expect(ran).toEqual(['first, settled', 'second'])
})

test('pause ends at its time on the scheduler, or at once when its signal aborts', async () => {
  const scheduler = createManualScheduler(0)
  let ended = false
  const paused = pause(scheduler, 1_000).then(() => {
    ended = true
  })
  await scheduler.advance(999)
  expect(ended).toBe(false)
  await scheduler.advance(1)
  await paused
  expect(ended).toBe(true)

  const stop = new AbortController()
  const stopped = pause(scheduler, 60_000, stop.signal)
  stop.abort()
  await stopped
  // Its timer is gone with it.
  expect(scheduler.pending()).toBe(0)
})
