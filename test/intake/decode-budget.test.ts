// Decoded pixels are what costs memory: every preparation takes its cost from a budget shared by the
// process and waits in line when it is spent, an image that alone needs more than the budget is
// refused before anything is decoded, and a GIF is decoded onto a reduced canvas instead of a
// full-size RGBA copy. Over HTTP against the real service; the budget is observed through the
// intake's `observe` option.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createImageIntake } from '../../src/intake/index.ts'
import { prepareBytes } from '../../src/intake/prepare.ts'
import type { IntakeUsage } from '../../src/intake/types.ts'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env.ts'
import { gifBomb, pngBomb } from '../support/images.ts'
import { waitUntil } from '../support/service.ts'

const MAX_SIDE = 1024
const PNG_BOMB = pngBomb(3000, 3000)
const GIF_BOMB = gifBomb(7000, 7000)
const pngCost = prepareBytes({ bytes: PNG_BOMB, format: 'png', width: 3000, height: 3000 }, MAX_SIDE)
const gifCost = prepareBytes({ bytes: GIF_BOMB, format: 'gif', width: 7000, height: 7000 }, MAX_SIDE)

/** A service whose intake has `budget` bytes for decoding, and what the test saw of that budget. */
async function budgetedEnv(budget: number) {
  const seen = { peak: 0, decodes: 0 }
  const observe = (usage: IntakeUsage): void => {
    seen.peak = Math.max(seen.peak, usage.decodeBytes)
    if (usage.decodeBytes > 0) seen.decodes++
  }
  const env = await startAltTextEnv({
    env: { ALTTEXT_IMAGE_MAX_SIDE: String(MAX_SIDE) },
    overrides: { intakeOptions: { maxSide: MAX_SIDE, decodeBudgetBytes: budget, observe } },
  })
  return { env, seen }
}

describe('a budget that holds one of two bombs', () => {
  let env: AltTextEnv
  let seen: { peak: number; decodes: number }
  beforeAll(async () => {
    ;({ env, seen } = await budgetedEnv(Math.max(pngCost, gifCost)))
  })
  afterAll(() => env.stop())

  test('two PNG bombs and two GIF bombs at once all succeed, one decode after another, never over the budget', async () => {
    const keys = [env.key, (await env.service.api.register()).apiKey]
    const images = [PNG_BOMB, GIF_BOMB, pngBomb(3000, 2999), gifBomb(7000, 6999)].map((bytes) => env.serve(bytes))
    const answers = await Promise.all(images.map((url, i) => env.generate({ image_url: url }, keys[i % 2])))
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200])
    expect(answers.map((answer) => answer.body.image)).toEqual([
      { width: 3000, height: 3000, format: 'png' },
      { width: 7000, height: 7000, format: 'gif' },
      { width: 3000, height: 2999, format: 'png' },
      { width: 7000, height: 6999, format: 'gif' },
    ])
    expect(seen.decodes).toBeGreaterThanOrEqual(4)
    expect(seen.peak).toBeGreaterThanOrEqual(Math.min(pngCost, gifCost))
    expect(seen.peak).toBeLessThanOrEqual(Math.max(pngCost, gifCost))
  }, 30_000)
})

describe('a budget smaller than one bomb', () => {
  let env: AltTextEnv
  let seen: { peak: number; decodes: number }
  // Room for the GIF bomb (a reduced canvas, not 7000×7000×4 bytes), not for the PNG bomb.
  const budget = 80 * 1024 * 1024
  beforeAll(async () => {
    ;({ env, seen } = await budgetedEnv(budget))
  })
  afterAll(() => env.stop())

  test('the PNG bomb is refused before anything is decoded, and the model is never asked', async () => {
    expect(pngCost).toBeGreaterThan(budget)
    const res = await env.generate({ image_url: env.serve(PNG_BOMB) })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_image_url')
    expect(res.body.error.message).toBe("the image is 3000×3000 pixels, too many to decode within this service's memory limit")
    expect(seen.peak).toBe(0)
    expect(env.ollama.chatRequests()).toHaveLength(0)
  })

  test('a 7000×7000 GIF bomb is prepared within a budget under half its RGBA size', async () => {
    expect(gifCost).toBeLessThan((7000 * 7000 * 4) / 2)
    const res = await env.generate({ image_url: env.serve(GIF_BOMB) })
    expect(res.status).toBe(200)
    expect(seen.peak).toBe(gifCost)
    const sent = env.ollama.chatRequests()[0]!.messages!.flatMap((message) => message.images ?? [])
    expect(sent).toHaveLength(1)
  }, 20_000)
})

describe('waiting for the budget, and giving up', () => {
  const fetched = (bytes: Uint8Array, format: 'png' | 'gif', width: number, height: number) => ({
    bytes,
    contentHash: String(width),
    format,
    width,
    height,
    finalUrl: 'https://example.invalid/bomb',
  })

  test('a preparation that waits for the budget past its signal is 503 overloaded, not a model timeout', async () => {
    let waiting = 0
    const controller = new AbortController()
    const intake = createImageIntake({
      allowPrivateHosts: [],
      decodeBudgetBytes: pngCost,
      observe: (usage) => {
        waiting = usage.waiting
        if (usage.waiting === 1) controller.abort()
      },
    })
    try {
      const first = intake.prepare(fetched(PNG_BOMB, 'png', 3000, 3000))
      const second = intake.prepare(fetched(pngBomb(3000, 2998), 'png', 3000, 2998), controller.signal)
      await expect(second).rejects.toMatchObject({
        code: 'overloaded',
        status: 503,
        message: 'the image could not be prepared before the deadline of this request; retry in a few seconds',
        retryAfterSeconds: 5,
      })
      expect(waiting).toBe(0)
      expect((await first).width).toBe(1024)
    } finally {
      await intake.close()
    }
  }, 20_000)

  test('a GIF decode whose signal aborts is ended at once and gives its budget back', async () => {
    let decodeBytes = 0
    const controller = new AbortController()
    const intake = createImageIntake({
      allowPrivateHosts: [],
      observe: (usage) => {
        decodeBytes = usage.decodeBytes
        if (usage.decodeBytes > 0) controller.abort()
      },
    })
    try {
      await expect(intake.prepare(fetched(GIF_BOMB, 'gif', 7000, 7000), controller.signal)).rejects.toMatchObject({ code: 'overloaded' })
      expect(decodeBytes).toBe(0)
    } finally {
      await intake.close()
    }
  })

  test('an addon decode whose signal aborts answers at once and gives its budget back when the decode stops', async () => {
    let decodeBytes = 0
    const controller = new AbortController()
    const intake = createImageIntake({
      allowPrivateHosts: [],
      observe: (usage) => {
        decodeBytes = usage.decodeBytes
        if (usage.decodeBytes > 0) controller.abort()
      },
    })
    try {
      await expect(intake.prepare(fetched(PNG_BOMB, 'png', 3000, 3000), controller.signal)).rejects.toMatchObject({ code: 'overloaded' })
      await waitUntil(() => decodeBytes === 0, 'the budget to come back', 15_000)
    } finally {
      await intake.close()
    }
  }, 20_000)
})
