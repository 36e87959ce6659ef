// One service with the fake model and two organisations: A (owner/reviewer/author keys) and B (owner key).
import { expect } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import type { TestService } from '../support/service'

export type QueueEnv = AltTextEnv & {
  orgA: string
  orgB: string
  keys: { owner: string; reviewer: string; author: string; outsider: string }
  /** A pending suggestion of org A with a proposed text (free); its id. */
  submit(ref?: string): Promise<string>
}

export const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

/** Invites `email` to the organisation as `role` and accepts with `personalKey`; the token is read from the log mailer's line. */
export async function join(service: TestService, orgId: string, ownerKey: string, person: { email: string; apiKey: string }, role: string) {
  const invited = await service.api.post(`/api/orgs/${orgId}/invitations`, { email: person.email, role }, ownerKey)
  expect(invited.status).toBe(201)
  const tokens = [...service.logText().matchAll(/token=([0-9a-f]{64})/gu)].map((m) => m[1]!)
  const accepted = await service.api.post('/api/invitations/accept', { token: tokens.at(-1) }, person.apiKey)
  expect(accepted.status).toBe(200)
  const key = await service.api.post('/api/keys', { org_id: orgId }, person.apiKey)
  return key.body.api_key as string
}

export async function startQueueEnv(): Promise<QueueEnv> {
  const env = await startAltTextEnv()
  const { service } = env
  const owner = await service.api.register()
  const orgA = (await service.api.post('/api/orgs', { name: 'A' }, owner.apiKey)).body.id as string
  const ownerKey = (await service.api.post('/api/keys', { org_id: orgA }, owner.apiKey)).body.api_key as string
  const reviewer = await join(service, orgA, ownerKey, await service.api.register(), 'reviewer')
  const author = await join(service, orgA, ownerKey, await service.api.register(), 'author')
  const other = await service.api.register()
  const orgB = (await service.api.post('/api/orgs', { name: 'B' }, other.apiKey)).body.id as string
  const outsider = (await service.api.post('/api/keys', { org_id: orgB }, other.apiKey)).body.api_key as string
  let n = 0
  return {
    ...env,
    orgA,
    orgB,
    keys: { owner: ownerKey, reviewer, author, outsider },
    async submit(ref = `f.md:${++n}:1`) {
      const res = await service.api.post(
        '/api/suggestions',
        { image_base64: base64(makePng(40, 40)), target: { kind: 'file', ref }, proposed_alt: `Alt ${ref}.` },
        author,
      )
      expect(res.status).toBe(201)
      return res.body.id as string
    },
  }
}
