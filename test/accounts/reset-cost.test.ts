// What a password-reset request costs, whoever sends it: a bogus reset token never reaches the password
// hasher, and forgot-password does the same store work for an unknown email as for a known one (the
// timing itself is measured by the benchmark, not asserted here).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { argon2idHasher, type PasswordHasher } from '../../src/modules/accounts/service'
import type { Store } from '../../src/store/contract'
import { startSmtpCapture, type SmtpCapture } from '../support/smtp'
import { startTestService, uniqueEmail, type TestService } from '../support/service'

let hashCalls = 0
const countingHasher: PasswordHasher = {
  hash: async (password) => {
    hashCalls++
    return argon2idHasher.hash(password)
  },
  verify: (password, hash) => argon2idHasher.verify(password, hash),
}

/** Store calls as "group.method", in order, with the account argument of issue(). */
let storeCalls: string[] = []
function recording(real: Store): Store {
  const wrapped: Record<string, unknown> = { ...real }
  for (const group of ['accounts', 'keys', 'resetTokens', 'credits', 'cache'] as const) {
    const methods = real[group] as unknown as Record<string, (...args: unknown[]) => unknown>
    wrapped[group] = Object.fromEntries(
      Object.entries(methods).map(([name, method]) => [
        name,
        (...args: unknown[]) => {
          storeCalls.push(`${group}.${name}`)
          return method(...args)
        },
      ]),
    )
  }
  return wrapped as unknown as Store
}

let dir: string
let service: TestService
let smtp: SmtpCapture

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'alttext-reset-cost-'))
  smtp = await startSmtpCapture()
  service = await startTestService({
    dir,
    env: { ALTTEXT_SMTP_URL: smtp.url, ALTTEXT_MAIL_FROM: 'alttext@alttext.test', ALTTEXT_RATE_LIMITS: 'off' },
    overrides: { passwords: countingHasher },
    wrapStore: recording,
  })
})
afterAll(async () => {
  await service.stop()
  await smtp.stop()
  rmSync(dir, { recursive: true, force: true })
})
beforeEach(() => {
  hashCalls = 0
  storeCalls = []
})

async function requestResetToken(email: string): Promise<string> {
  const seen = new Set(smtp.messages)
  expect((await service.api.post('/api/forgot-password', { email })).status).toBe(202)
  const mail = await smtp.waitForMail((m) => m.to.includes(email) && !seen.has(m))
  return mail.text.match(/\/reset-password\?token=([\w-]+)/)![1]!
}

describe('reset-password checks the token before hashing', () => {
  test('50 bogus tokens: 50 × 400 invalid_token and not one password hash', async () => {
    for (let i = 0; i < 50; i++) {
      const res = await service.api.post('/api/reset-password', { token: `bogus-token-${i}-${'x'.repeat(40)}`, new_password: 'a new password' })
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('invalid_token')
    }
    expect(hashCalls).toBe(0)
  })

  test('a used token is refused without hashing; a valid one costs exactly one hash', async () => {
    const account = await service.api.register()
    const token = await requestResetToken(account.email)
    hashCalls = 0
    expect((await service.api.post('/api/reset-password', { token, new_password: 'the new password' })).status).toBe(200)
    expect(hashCalls).toBe(1)
    hashCalls = 0
    expect((await service.api.post('/api/reset-password', { token, new_password: 'once more please' })).status).toBe(400)
    expect(hashCalls).toBe(0)
  })

  test('two resets racing with one token: exactly one succeeds (consume re-checks the token)', async () => {
    const account = await service.api.register()
    const token = await requestResetToken(account.email)
    const results = await Promise.all([
      service.api.post('/api/reset-password', { token, new_password: 'first racer password' }),
      service.api.post('/api/reset-password', { token, new_password: 'second racer password' }),
    ])
    expect(results.map((r) => r.status).sort()).toEqual([200, 400])
  })
})

describe('forgot-password costs the same for known and unknown emails', () => {
  const decoyRow = async () => (await service.query<{ token_hash: string; created_at: number }>('SELECT token_hash, created_at FROM reset_token_decoys'))[0]

  test('the same store calls on both paths, and the unknown one really writes (a decoy row)', async () => {
    const account = await service.api.register()
    const seen = new Set(smtp.messages)

    storeCalls = []
    expect((await service.api.post('/api/forgot-password', { email: account.email })).status).toBe(202)
    const known = storeCalls.filter((c) => !c.startsWith('activity.'))

    const decoyBefore = await decoyRow()
    storeCalls = []
    expect((await service.api.post('/api/forgot-password', { email: uniqueEmail('nobody') })).status).toBe(202)
    const unknown = storeCalls.filter((c) => !c.startsWith('activity.'))

    expect(known).toEqual(['accounts.findByEmail', 'resetTokens.issue'])
    expect(unknown).toEqual(known)
    // The decoy write reached the database file: a new hash, not a token anyone was sent.
    const decoyAfter = await decoyRow()
    expect(decoyAfter?.token_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(decoyAfter?.token_hash).not.toBe(decoyBefore?.token_hash)

    // Only the known email got mail.
    await smtp.waitForMail((m) => m.to.includes(account.email) && !seen.has(m))
    expect(smtp.messages.filter((m) => !seen.has(m)).map((m) => m.to)).toEqual([[account.email]])
  })

  test('an account mailed less than a minute ago costs the same too: the same calls, and the decoy is written', async () => {
    const account = await service.api.register()
    await requestResetToken(account.email)
    const decoyBefore = await decoyRow()
    storeCalls = []
    expect((await service.api.post('/api/forgot-password', { email: account.email })).status).toBe(202)
    expect(storeCalls.filter((c) => !c.startsWith('activity.'))).toEqual(['accounts.findByEmail', 'resetTokens.issue'])
    expect((await decoyRow())?.token_hash).not.toBe(decoyBefore?.token_hash)
  })
})
