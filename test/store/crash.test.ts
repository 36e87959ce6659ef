// Durability under kill -9: every write the service acknowledged survives a crash in the middle of load.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnService, type ServiceProcess } from '../support/process'
import { apiClient, uniqueEmail, waitUntil } from '../support/service'

type KeyState = 'active' | 'revoked' | 'uncertain'
type TrackedKey = { apiKey: string; prefix: string; state: KeyState }
type TrackedAccount = { email: string; password: string; keys: Map<string, TrackedKey> }

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'alttext-crash-'))
})
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true })
})

async function stopGracefully(svc: ServiceProcess): Promise<void> {
  if (svc.proc.exitCode === null && svc.proc.signalCode === null) svc.proc.kill('SIGTERM')
  await svc.exited
}

describe('kill -9 under load', () => {
  test('every acknowledged account, key, rotation and revocation survives', async () => {
    const dbPath = join(tmp, 'alttext.db')
    const env = { ALTTEXT_DB: dbPath, ALTTEXT_RATE_LIMITS: 'off' }
    const first = await spawnService(env)
    const api = apiClient(first.url)

    const accounts: TrackedAccount[] = []
    const unexpected: string[] = []
    let acknowledged = 0
    let inFlight = 0
    let killed = false

    /** Sends one request; returns null when the service went away (only expected after the kill). */
    async function send<T = any>(method: 'GET' | 'POST', path: string, body?: unknown, key?: string) {
      inFlight++
      try {
        return await api.request<T>(method, path, { body, key })
      } catch (error) {
        if (!killed) unexpected.push(`${method} ${path}: ${String(error)}`)
        return null
      } finally {
        inFlight--
      }
    }

    const pickActive = (account: TrackedAccount, skip?: string): TrackedKey | undefined =>
      [...account.keys.values()].find((k) => k.state === 'active' && k.prefix !== skip)

    async function loop(worker: number): Promise<void> {
      for (let round = 0; !killed; round++) {
        const email = uniqueEmail(`crash-w${worker}`)
        const password = `crash-password-${worker}-${round}`
        const reg = await send('POST', '/api/register', { email, password })
        if (!reg) return
        if (reg.status !== 201) {
          unexpected.push(`register ${reg.status} ${reg.text}`)
          return
        }
        const account: TrackedAccount = { email, password, keys: new Map() }
        account.keys.set(reg.body.prefix, { apiKey: reg.body.api_key, prefix: reg.body.prefix, state: 'active' })
        accounts.push(account)
        acknowledged++
        const authKey = reg.body.api_key as string
        const authPrefix = reg.body.prefix as string

        for (let step = 0; step < 8 && !killed; step++) {
          const created = await send('POST', '/api/keys', { label: `w${worker}-r${round}-s${step}` }, authKey)
          if (!created) return
          if (created.status !== 201) {
            unexpected.push(`create ${created.status} ${created.text}`)
            return
          }
          account.keys.set(created.body.prefix, { apiKey: created.body.api_key, prefix: created.body.prefix, state: 'active' })
          acknowledged++

          if (step % 2 === 1) {
            const target = pickActive(account, authPrefix)
            if (target) {
              target.state = 'uncertain' // until the service acknowledges the rotation
              const rotated = await send('POST', '/api/keys/rotate', { key_prefix: target.prefix }, authKey)
              if (!rotated) return
              if (rotated.status !== 201) {
                unexpected.push(`rotate ${rotated.status} ${rotated.text}`)
                return
              }
              target.state = 'revoked'
              account.keys.set(rotated.body.prefix, { apiKey: rotated.body.api_key, prefix: rotated.body.prefix, state: 'active' })
              acknowledged++
            }
          }
          if (step % 3 === 2) {
            const target = pickActive(account, authPrefix)
            if (target) {
              target.state = 'uncertain' // until the service acknowledges the revocation
              const revoked = await send('POST', '/api/keys/revoke', { key_prefix: target.prefix }, authKey)
              if (!revoked) return
              if (revoked.status !== 200) {
                unexpected.push(`revoke ${revoked.status} ${revoked.text}`)
                return
              }
              target.state = 'revoked'
              acknowledged++
            }
          }
        }
      }
    }

    const workers = Array.from({ length: 4 }, (_, i) => loop(i))
    // Kill once a fair amount of work was acknowledged, at a moment when requests are in flight.
    await waitUntil(() => unexpected.length > 0 || (acknowledged >= 60 && inFlight > 0), 'acknowledged load with requests in flight', 30_000)
    expect(unexpected).toEqual([])
    killed = true
    first.proc.kill('SIGKILL')
    await first.exited
    expect(first.proc.signalCode).toBe('SIGKILL')
    await Promise.all(workers)
    expect(unexpected).toEqual([])

    const allKeys = accounts.flatMap((a) => [...a.keys.values()])
    const activeKeys = allKeys.filter((k) => k.state === 'active')
    const revokedKeys = allKeys.filter((k) => k.state === 'revoked')
    expect(accounts.length).toBeGreaterThanOrEqual(4)
    expect(activeKeys.length).toBeGreaterThan(0)
    expect(revokedKeys.length).toBeGreaterThan(0)

    // Restart on the same file.
    const second = await spawnService(env)
    try {
      const after = apiClient(second.url)
      for (const account of accounts) {
        const login = await after.post('/api/login', { email: account.email, password: account.password })
        expect(login.status).toBe(200)
        const listed = new Set((login.body.keys as { prefix: string }[]).map((k) => k.prefix))
        for (const key of account.keys.values()) {
          if (key.state === 'active') expect(listed.has(key.prefix)).toBe(true)
          if (key.state === 'revoked') expect(listed.has(key.prefix)).toBe(false)
        }
      }
      for (const key of activeKeys) {
        const res = await after.get('/api/usage', key.apiKey)
        expect({ prefix: key.prefix, status: res.status }).toEqual({ prefix: key.prefix, status: 200 })
      }
      for (const key of revokedKeys) {
        const res = await after.get('/api/usage', key.apiKey)
        expect({ prefix: key.prefix, status: res.status }).toEqual({ prefix: key.prefix, status: 401 })
        expect(res.body.error.code).toBe('invalid_api_key')
      }
    } finally {
      await stopGracefully(second)
    }
    expect(second.proc.exitCode).toBe(0)

    // The file itself is sound.
    const db = new Database(dbPath)
    try {
      expect(db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').get()!.integrity_check).toBe('ok')
    } finally {
      db.close()
    }
  }, 90_000)
})
