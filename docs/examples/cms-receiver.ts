// A minimal receiver of alttext's `suggestion.decided` webhook, for any CMS (docs/integrations.md).
// It checks the signature, drops replays, reads the suggestion's current state (events may arrive out of
// order after retries), and writes the decided alt text back only where the CMS still holds what it held
// when the suggestion was made: a person's newer text always wins. Plug your CMS in through `Cms`.
import { createHmac, timingSafeEqual } from 'node:crypto'

/** How far a signature's time may be from now: older ones are replays. */
const TOLERANCE_SECONDS = 300

/** What the receiver needs of a CMS: the asset's alt text now, and a way to write it. */
export type Cms = {
  readAlt(ref: string): Promise<string | null>
  writeAlt(ref: string, altText: string): Promise<void>
}

export type ReceiverOptions = {
  /** The organisation's signing secret (`whsec_…`), shown once by `PUT /api/orgs/{id}/webhook`. */
  secret: string
  /** The alttext service and a key of the organisation, to read the suggestion's current state. */
  service: { url: string; apiKey: string }
  /** The target kind your CMS's suggestions were made with (`POST /api/suggestions`, `target.kind`). */
  targetKind: string
  cms: Cms
  /** Delivery ids already handled: keep them in your database in production (deliveries are at least once). */
  seen?: Set<string>
  now?: () => number
}

/** `Alttext-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, in constant time. */
export function verifyAlttextSignature(header: string | null, rawBody: string, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  if (header === null) return false
  const fields = header.split(',').map((part) => part.split('='))
  const t = Number(fields.find(([name]) => name === 't')?.[1])
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > TOLERANCE_SECONDS) return false
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest()
  return fields
    .filter(([name]) => name === 'v1')
    .some(([, hex]) => {
      const given = Buffer.from(hex ?? '', 'hex')
      return given.length === expected.length && timingSafeEqual(given, expected)
    })
}

/** The fields of a suggestion (GET /api/suggestions/{id}) the receiver reads. */
type Suggestion = { status: string; target: { ref: string }; current_alt: string | null; final_alt: string | null }

/** What the receiver did with one delivery (its answer is always 2xx once the signature holds). */
export type Outcome = 'written' | 'stale' | 'ignored' | 'duplicate'

/** A fetch handler: `Bun.serve({ port: 8443, tls, fetch: receiver(options) })`, or any framework's route. */
export function receiver(options: ReceiverOptions): (request: Request) => Promise<Response> {
  const seen = options.seen ?? new Set<string>()
  const now = options.now ?? Date.now
  const answer = (outcome: Outcome) => Response.json({ outcome })
  return async (request) => {
    const raw = await request.text()
    if (!verifyAlttextSignature(request.headers.get('alttext-signature'), raw, options.secret, Math.floor(now() / 1000))) {
      return new Response('bad signature', { status: 400 })
    }
    const delivery = request.headers.get('alttext-delivery') ?? ''
    if (seen.has(delivery)) return answer('duplicate')
    const event = JSON.parse(raw)
    if (event.event !== 'suggestion.decided' || event.suggestion?.target?.kind !== options.targetKind) {
      seen.add(delivery)
      return answer('ignored')
    }
    // The event may be older than the suggestion's state (an accept retried past a reopen): ask.
    const current = await fetch(`${options.service.url}/api/suggestions/${event.suggestion.id}`, {
      headers: { 'X-API-Key': options.service.apiKey },
    })
    if (!current.ok) return new Response('alttext unreachable, retry later', { status: 503 })
    const suggestion = (await current.json()) as Suggestion
    let outcome: Outcome = 'ignored'
    if (suggestion.status === 'accepted' || suggestion.status === 'edited') {
      const { ref } = suggestion.target
      const altNow = (await options.cms.readAlt(ref)) ?? ''
      if (altNow !== (suggestion.current_alt ?? '')) outcome = 'stale'
      else {
        await options.cms.writeAlt(ref, suggestion.final_alt ?? '')
        outcome = 'written'
      }
    }
    seen.add(delivery)
    return answer(outcome)
  }
}
