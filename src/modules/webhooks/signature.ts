// The Alttext-Signature header, Stripe's scheme: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`
// keyed with the account's webhook secret (the whole `whsec_…` string, as UTF-8). The timestamp inside
// the signed text lets a receiver refuse replays older than its tolerance.
import { createHmac } from 'node:crypto'

export const SIGNATURE_HEADER = 'Alttext-Signature'

export function signatureHeader(secret: string, rawBody: string, timestampSeconds: number): string {
  const digest = createHmac('sha256', secret).update(`${timestampSeconds}.${rawBody}`).digest('hex')
  return `t=${timestampSeconds},v1=${digest}`
}
