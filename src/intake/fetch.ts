// Fetching a caller-supplied image URL without becoming a proxy into the operator's network:
// https only, every hop's host resolved once and every answer checked, the connection pinned
// to the checked addresses, redirects followed here (never by the client), bytes counted as
// they arrive, and the caller's deadline honoured at every await.
import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { raceAbort } from '../shared/abort.ts'
import { ApiError } from '../shared/errors.ts'
import { blockedAddressKind, isAllowedByList, parseIp } from './address.ts'
import { hostOf, type CheckedAddress, type HopOutcome } from './hop.ts'
import { deadlineError, invalidImageUrl, refusedDestination } from './refusals.ts'
import type { HostResolver } from './types.ts'

/** Longest image URL accepted, in characters: the request schema and every redirect hop use it. */
export const MAX_URL_LENGTH = 2048

export type FetchLimits = {
  allowPrivateHosts: string[]
  resolve: HostResolver
  maxRedirects: number
}

/** node:dns lookup of every address (v4 and v6), in the resolver's own order. */
export const systemResolver: HostResolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true })
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }))
}

/** Checks the rules a URL must meet before anything is resolved or sent. */
export function checkImageUrl(raw: string): URL {
  if (raw.length > MAX_URL_LENGTH) throw invalidImageUrl(`the image URL is longer than ${MAX_URL_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw invalidImageUrl('the image URL is not a valid absolute URL')
  }
  return checkParsedUrl(url, false)
}

/** Which rule of an outgoing URL (an image's, a webhook's) `url` breaks, or null when it keeps them all. */
export type UrlProblem = 'scheme' | 'credentials' | 'no-host' | 'too-long'

export function urlProblem(url: URL): UrlProblem | null {
  if (url.protocol !== 'https:') return 'scheme'
  if (url.username !== '' || url.password !== '') return 'credentials'
  if (url.hostname === '') return 'no-host'
  if (url.href.length > MAX_URL_LENGTH) return 'too-long'
  return null
}

function checkParsedUrl(url: URL, viaRedirect: boolean): URL {
  const problem = urlProblem(url)
  if (problem === null) return url
  const scheme = url.protocol.replace(/:$/, '')
  if (problem === 'scheme') {
    throw invalidImageUrl(
      viaRedirect ? `the image URL redirects to a ${scheme} URL; the image URL must use https on every hop` : `the image URL must use https (found ${scheme})`,
    )
  }
  const where = viaRedirect ? `the image URL redirects to a URL that` : 'the image URL'
  if (problem === 'credentials') throw invalidImageUrl(`${where} contains a user name or password, which is not allowed`)
  if (problem === 'no-host') throw invalidImageUrl(`${where} has no host`)
  throw invalidImageUrl(`${where} is longer than ${MAX_URL_LENGTH} characters`)
}

/** Who may be reached: the operator's allow-list of private hosts, and how names are resolved. */
export type AddressPolicy = Pick<FetchLimits, 'allowPrivateHosts' | 'resolve'>

/** Why a destination may not be contacted; `detail` (what the name resolved to) is for the operator log only. */
export class DestinationRefused extends Error {
  constructor(
    readonly kind: 'unresolvable' | 'blocked',
    /** The host is an IP literal (no name was resolved). */
    readonly literal: boolean,
    readonly detail: string,
  ) {
    super(detail)
  }
}

/**
 * The address policy over a host's answers, with no lookup: every answer must be an IP address that is
 * not blocked, unless the allow-list names the host or the address. Throws DestinationRefused.
 */
export function checkAnswers(host: string, answers: { address: string }[], allowPrivateHosts: string[]): CheckedAddress[] {
  const literal = isIP(host) !== 0
  const checked: CheckedAddress[] = []
  for (const answer of answers) {
    const parsed = parseIp(answer.address)
    if (parsed === null)
      throw new DestinationRefused('unresolvable', literal, `${host}: the resolver answered ${JSON.stringify(answer.address)}, which is not an IP address`)
    const kind = blockedAddressKind(answer.address)
    if (kind !== null && !isAllowedByList(host, answer.address, allowPrivateHosts)) {
      throw new DestinationRefused('blocked', literal, `${host} → ${answer.address} (${kind})`)
    }
    checked.push({ address: answer.address, family: parsed.family })
  }
  return checked
}

/**
 * Resolves the URL's host once (an IP literal is its own answer) and checks every answer (checkAnswers).
 * Throws DestinationRefused, or `abortError()` when `signal` aborts first.
 */
export async function resolveDestination(url: URL, policy: AddressPolicy, signal: AbortSignal, abortError: () => Error): Promise<CheckedAddress[]> {
  const host = hostOf(url)
  const literalFamily = isIP(host)
  let answers: { address: string; family: number }[]
  if (literalFamily !== 0) {
    answers = [{ address: host, family: literalFamily }]
  } else {
    try {
      answers = await raceAbort(policy.resolve(host), signal, abortError)
    } catch (error) {
      if (signal.aborted || error instanceof ApiError) throw error
      throw new DestinationRefused(
        'unresolvable',
        false,
        `${host}: ${(error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error))}`,
      )
    }
    if (answers.length === 0) throw new DestinationRefused('unresolvable', false, `${host}: no addresses`)
  }
  return checkAnswers(host, answers, policy.allowPrivateHosts)
}

/**
 * Resolves the URL's host once and refuses if any answer is a blocked address. A name that does not
 * resolve and one that resolves to a blocked address read the same to the client, so that refusals cannot
 * map which internal names exist; what the name resolved to, or why not, goes to the operator log.
 */
async function resolveChecked(url: URL, limits: FetchLimits, signal: AbortSignal, viaRedirect: boolean): Promise<CheckedAddress[]> {
  try {
    return await resolveDestination(url, limits, signal, deadlineError)
  } catch (error) {
    if (!(error instanceof DestinationRefused)) throw error
    throw refusedDestination(hostOf(url), error.literal, viaRedirect, error.detail)
  }
}

/** One request to checked addresses (FetchPool.hop): a redirect or the body. */
export type Hop = (url: URL, addresses: CheckedAddress[], signal: AbortSignal) => Promise<HopOutcome>

/** Follows up to maxRedirects redirects, checking each hop like the first; returns the body. */
export async function fetchImageBytes(
  rawUrl: string,
  limits: FetchLimits,
  hop: Hop,
  signal: AbortSignal,
): Promise<{ bytes: Uint8Array; contentHash: string; finalUrl: string }> {
  if (signal.aborted) throw deadlineError()
  let url = checkImageUrl(rawUrl)
  for (let redirects = 0; ; ) {
    const addresses = await resolveChecked(url, limits, signal, redirects > 0)
    const outcome = await hop(url, addresses, signal)
    if (outcome.kind === 'body') return { bytes: outcome.bytes, contentHash: outcome.contentHash, finalUrl: url.href }
    if (redirects >= limits.maxRedirects) throw invalidImageUrl(`too many redirects (over ${limits.maxRedirects})`)
    redirects++
    let next: URL
    try {
      next = new URL(outcome.location, url)
    } catch {
      throw invalidImageUrl(`the image host answered ${outcome.status} with an invalid Location header`)
    }
    url = checkParsedUrl(next, true)
  }
}
