// Each intake owns its workers, pools and queues, and close() ends them: stopping the service
// terminates its intake's worker threads, and an intake that closes refuses what waits or runs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { blake3 } from '@napi-rs/blake-hash'
import { ApiError } from '../../src/shared/errors.ts'
import { startAltTextEnv } from '../support/alt-text-env.ts'
import { startHttpsImageServer, type HttpsImageServer } from '../support/https-image-server.ts'
import { makePng, makeStillGif } from '../support/images.ts'
import { waitUntil } from '../support/service.ts'
import { loopbackIntakeFor } from './fixtures.ts'

/** This process's Worker threads (Linux names each "Worker"; other threads come and go with the GC). */
const workerThreads = (): number =>
  readdirSync('/proc/self/task').filter((task) => {
    try {
      return readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim() === 'Worker'
    } catch {
      return false // the thread ended meanwhile
    }
  }).length

describe('stopping the service', () => {
  test("terminates its intake's fetch and GIF workers", async () => {
    // Every download goes to the fetch workers, so the two of them start with the first one.
    const env = await startAltTextEnv({ overrides: { intakeOptions: { hopInThread: 'never' } } })
    let stopped = false
    try {
      // A still GIF: its frame is decoded in the GIF worker (an animation's frames are decoded by libvips).
      expect((await env.generate({ image_url: env.serve(makeStillGif(40, 30)) })).status).toBe(200)
      expect((await env.generate({ image_url: env.serve(makePng(40, 30)) })).status).toBe(200)
      const running = workerThreads()
      await env.stop()
      stopped = true
      // Two fetch workers and the GIF worker.
      await waitUntil(() => workerThreads() <= running - 3, 'the intake workers to end')
    } finally {
      if (!stopped) await env.stop()
    }
  })
})

describe('an intake that closes', () => {
  let server: HttpsImageServer
  beforeAll(async () => {
    server = await startHttpsImageServer()
  })
  afterAll(() => server.stop())

  test('ends the downloads under way, refuses the work waiting for its turn and any work after', async () => {
    const intake = loopbackIntakeFor(server, { maxInFlightPerOwner: 1 })
    const inThread = server.route('/lifecycle/hang-1', { kind: 'hang' })
    const waiting = server.route('/lifecycle/hang-2', { kind: 'hang' })
    const signal = new AbortController().signal
    const running = intake.fetch(inThread, signal, 7).catch((error: unknown) => error)
    const queued = intake.fetch(waiting, signal, 7).catch((error: unknown) => error)
    await server.waitForRequest('/lifecycle/hang-1')
    await intake.close()

    for (const outcome of [await running, await queued]) {
      expect(outcome).toBeInstanceOf(ApiError)
      expect(outcome).toMatchObject({ code: 'overloaded', message: 'the service is shutting down; retry in a few seconds' })
    }
    expect(await server.slowResponses('/lifecycle/hang-1')[0]!.ended).toBe('client-gone')
    expect(server.hits('/lifecycle/hang-2')).toBe(0)
    const bytes = makePng(4, 4)
    const image = { bytes, contentHash: blake3(Buffer.from(bytes)).toString('hex'), format: 'png' as const, width: 4, height: 4, finalUrl: inThread }
    await expect(intake.prepare(image)).rejects.toMatchObject({ code: 'overloaded' })
    await expect(intake.fetch(inThread, signal)).rejects.toMatchObject({ code: 'overloaded' })
  })
})

describe('the intake keeps no state in its modules', () => {
  // Worker entry files keep their own thread's state; every other module holds constants only.
  const dir = join(import.meta.dir, '../../src/intake')
  const modules = readdirSync(dir).filter((name) => name.endsWith('.ts') && !name.endsWith('-worker.ts'))

  test.each(modules)('%s', (name) => {
    const topLevel = readFileSync(join(dir, name), 'utf8')
      .split('\n')
      .filter((line) => /^(export )?(let|var|const) /.test(line))
    // Constant lookup tables (`new Set([...])`) are fine; any other object made at load time is state.
    const mutable = topLevel.filter((line) => /^(export )?(let|var) /.test(line) || /= new (?!Set\(\[)|= \[\]|= null\b/.test(line))
    expect(mutable).toEqual([])
  })
})
