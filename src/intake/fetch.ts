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
import { deadlineError, invalidImageUrl } from './refusals.ts'
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

function checkParsedUrl(url: URL, viaRedirect: boolean): URL {
  const scheme = url.protocol.replace(/:$/, '')
  if (url.protocol !== 'https:') {
    throw invalidImageUrl(
      viaRedirect ? `the image URL redirects to a ${scheme} URL; the image URL must use https on every hop` : `the image URL must use https (found ${scheme})`,
    )
  }
  const where = viaRedirect ? `the image URL redirects to a URL that` : 'the image URL'
  if (url.username !== '' || url.password !== '') throw invalidImageUrl(`${where} contains a user name or password, which is not allowed`)
  if (url.hostname === '') throw invalidImageUrl(`${where} has no host`)
  if (url.href.length > MAX_URL_LENGTH) throw invalidImageUrl(`${where} is longer than ${MAX_URL_LENGTH} characters`)
  return url
}

/**
 * Resolves the URL's host once and refuses if any answer is a blocked address. The client learns the
 * category only (cannot be resolved, blocked); what the name resolved to goes to the operator log.
 */
async function resolveChecked(url: URL, limits: FetchLimits, signal: AbortSignal, viaRedirect: boolean): Promise<CheckedAddress[]> {
  const host = hostOf(url)
  const literalFamily = isIP(host)
  const unresolvable = (detail: string) =>
    invalidImageUrl(viaRedirect ? 'the image URL redirects to a host that cannot be resolved' : `the image host ${host} cannot be resolved`, detail)
  let answers: { address: string; family: number }[]
  if (literalFamily !== 0) {
    answers = [{ address: host, family: literalFamily }]
  } else {
    try {
      answers = await raceAbort(limits.resolve(host), signal, deadlineError)
    } catch (error) {
      if (error instanceof ApiError) throw error
      throw unresolvable(`${host}: ${(error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error))}`)
    }
    if (answers.length === 0) throw unresolvable(`${host}: no addresses`)
  }

  const checked: CheckedAddress[] = []
  for (const answer of answers) {
    const parsed = parseIp(answer.address)
    if (parsed === null) throw unresolvable(`${host}: the resolver answered ${JSON.stringify(answer.address)}, which is not an IP address`)
    const kind = blockedAddressKind(answer.address)
    if (kind !== null && !isAllowedByList(host, answer.address, limits.allowPrivateHosts)) {
      const detail = `${host} → ${answer.address} (${kind})`
      if (viaRedirect) throw invalidImageUrl('the image URL redirects to a blocked address', detail)
      throw invalidImageUrl(literalFamily !== 0 ? 'the image host is a blocked address' : `the image host ${host} resolves to a blocked address`, detail)
    }
    checked.push({ address: answer.address, family: parsed.family })
  }
  return checked
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
