// Fetching a caller-supplied image URL without becoming a proxy into the operator's network:
// https only, every hop's host resolved once and every answer checked, the connection pinned
// to the checked addresses, redirects followed here (never by the client), bytes counted as
// they arrive, and the caller's deadline honoured at every await.
import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { raceAbort } from '../shared/abort.ts'
import { ApiError } from '../shared/errors.ts'
import { blockedAddressKind, isAllowedByList, parseIp } from './address.ts'
import { hostOf, requestOnce, type CheckedAddress, type HopLimits, type HopOutcome } from './hop.ts'
import { deadlineError, invalidImageUrl } from './refusals.ts'
import type { FetchWorkerReply, FetchWorkerRequest } from './fetch-worker.ts'
import type { HostResolver } from './types.ts'
import { workerPath } from './worker-path.ts'

/** Longest image URL accepted, in characters: the request schema and every redirect hop use it. */
export const MAX_URL_LENGTH = 2048

export type FetchLimits = {
  allowPrivateHosts: string[]
  /** Full CA list for TLS, or undefined for the runtime's default trust store. */
  ca: string[] | undefined
  resolve: HostResolver
  maxBytes: number
  connectTimeoutMs: number
  maxRedirects: number
  /** Whether a hop while no other is under way runs in this thread (see `hop`); tests say 'never' to reach the workers. */
  hopInThread: 'when-alone' | 'never'
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

function withArticle(kind: string): string {
  return /^([aeio]|u(?!ni)|IETF|IPv)/i.test(kind) ? `an ${kind}` : `a ${kind}`
}

/** Resolves the URL's host once and refuses if any answer is a blocked address. */
async function resolveChecked(url: URL, limits: FetchLimits, signal: AbortSignal, viaRedirect: boolean): Promise<CheckedAddress[]> {
  const host = hostOf(url)
  const literalFamily = isIP(host)
  let answers: { address: string; family: number }[]
  if (literalFamily !== 0) {
    answers = [{ address: host, family: literalFamily }]
  } else {
    try {
      answers = await raceAbort(limits.resolve(host), signal, deadlineError)
    } catch (error) {
      if (error instanceof ApiError) throw error
      throw invalidImageUrl(`the image host ${host} cannot be resolved`)
    }
    if (answers.length === 0) throw invalidImageUrl(`the image host ${host} cannot be resolved`)
  }

  const checked: CheckedAddress[] = []
  for (const answer of answers) {
    const parsed = parseIp(answer.address)
    if (parsed === null) throw invalidImageUrl(`the image host ${host} resolves to something that is not an IP address`)
    const kind = blockedAddressKind(answer.address)
    if (kind !== null && !isAllowedByList(host, answer.address, limits.allowPrivateHosts)) {
      const address = `${withArticle(kind)} address (${answer.address})`
      if (literalFamily !== 0) {
        throw invalidImageUrl(`${viaRedirect ? 'the image URL redirects to' : 'the image host is'} ${address}, which is blocked`)
      }
      throw invalidImageUrl(
        viaRedirect
          ? `the image URL redirects to ${host}, which resolves to ${address}; such addresses are blocked`
          : `the image host ${host} resolves to ${address}, which is blocked`,
      )
    }
    checked.push({ address: answer.address, family: parsed.family })
  }
  return checked
}

// A hop while no other is under way runs in this thread: the two thread hand-offs of a worker cost
// ~0.4 ms, a fifth of fetching a 1 MB image, and one download at a time (hashed in 2 MB turns, see
// hop.ts) leaves the event loop free. Hops that overlap run in a small pool of long-lived workers (see
// fetch-worker.ts), so a burst of large images does not load this thread; where the worker is missing
// from a build, in this thread too.
const FETCH_WORKERS = 2
let hopsInThread = 0
type PendingHop = { worker: Worker; resolve: (outcome: HopOutcome) => void; reject: (error: unknown) => void }
const caIds = new WeakMap<string[], number>()
let nextCaId = 0
/** The CA lists each worker holds already (see WorkerHopLimits). */
const caListsPosted = new WeakMap<Worker, Set<number>>()
const pendingHops = new Map<number, PendingHop>()
let fetchWorkers: Worker[] | null = null
let nextWorker = 0
let nextHopId = 0

function startFetchWorker(path: string): Worker {
  const worker = new Worker(path)
  worker.unref()
  worker.onmessage = (event: MessageEvent<FetchWorkerReply>) => {
    const reply = event.data
    const pending = pendingHops.get(reply.id)
    if (!pending) return // aborted meanwhile
    pendingHops.delete(reply.id)
    if (pendingHops.size === 0) for (const w of fetchWorkers ?? []) w.unref()
    if (reply.ok) pending.resolve(reply.outcome)
    else pending.reject(reply.refusal ? invalidImageUrl(reply.message) : new Error(reply.message))
  }
  worker.onerror = (event: ErrorEvent) => {
    // A crashed worker fails its own hops and is replaced; the others carry on.
    for (const [id, pending] of pendingHops) {
      if (pending.worker !== worker) continue
      pendingHops.delete(id)
      pending.reject(new Error(`image fetch worker failed: ${event.message}`))
    }
    const index = fetchWorkers?.indexOf(worker) ?? -1
    worker.terminate()
    if (fetchWorkers && index >= 0) fetchWorkers[index] = startFetchWorker(path)
  }
  return worker
}

function pickFetchWorker(): Worker | null {
  if (fetchWorkers === null) {
    try {
      const path = workerPath('fetch-worker')
      fetchWorkers = Array.from({ length: FETCH_WORKERS }, () => startFetchWorker(path))
    } catch {
      fetchWorkers = []
    }
  }
  if (fetchWorkers.length === 0) return null
  return fetchWorkers[nextWorker++ % fetchWorkers.length]!
}

async function hopInThread(url: URL, addresses: CheckedAddress[], limits: HopLimits, signal: AbortSignal): Promise<HopOutcome> {
  hopsInThread++
  try {
    return await requestOnce(url, addresses, limits, signal)
  } finally {
    hopsInThread--
  }
}

function hop(url: URL, addresses: CheckedAddress[], limits: HopLimits, placement: FetchLimits['hopInThread'], signal: AbortSignal): Promise<HopOutcome> {
  if (placement === 'when-alone' && hopsInThread === 0 && pendingHops.size === 0) return hopInThread(url, addresses, limits, signal)
  const worker = pickFetchWorker()
  if (worker === null) return hopInThread(url, addresses, limits, signal)
  if (signal.aborted) return Promise.reject(deadlineError())
  const id = ++nextHopId
  return new Promise<HopOutcome>((resolve, reject) => {
    const onAbort = (): void => {
      if (!pendingHops.delete(id)) return
      if (pendingHops.size === 0) for (const w of fetchWorkers ?? []) w.unref()
      worker.postMessage({ type: 'abort', id } satisfies FetchWorkerRequest)
      reject(deadlineError())
    }
    signal.addEventListener('abort', onAbort, { once: true })
    const done = () => signal.removeEventListener('abort', onAbort)
    pendingHops.set(id, {
      worker,
      resolve: (outcome) => {
        done()
        resolve(outcome)
      },
      reject: (error) => {
        done()
        reject(error)
      },
    })
    let caId: number | null = null
    let ca: string[] | undefined
    if (limits.ca !== undefined) {
      caId = caIds.get(limits.ca) ?? nextCaId++
      caIds.set(limits.ca, caId)
      const posted = caListsPosted.get(worker) ?? new Set<number>()
      caListsPosted.set(worker, posted)
      if (!posted.has(caId)) {
        posted.add(caId)
        ca = limits.ca
      }
    }
    // Keeps the process alive while a hop is under way; idle workers are unref'd again.
    worker.ref()
    const message: FetchWorkerRequest = {
      type: 'hop',
      id,
      url: url.href,
      addresses,
      limits: { maxBytes: limits.maxBytes, connectTimeoutMs: limits.connectTimeoutMs, caId },
    }
    worker.postMessage(ca === undefined ? message : { ...message, ca })
  })
}

/** Follows up to maxRedirects redirects, checking each hop like the first; returns the body. */
export async function fetchImageBytes(
  rawUrl: string,
  limits: FetchLimits,
  signal: AbortSignal,
): Promise<{ bytes: Uint8Array; contentHash: string; finalUrl: string }> {
  if (signal.aborted) throw deadlineError()
  let url = checkImageUrl(rawUrl)
  for (let redirects = 0; ; ) {
    const addresses = await resolveChecked(url, limits, signal, redirects > 0)
    const outcome = await hop(
      url,
      addresses,
      { ca: limits.ca, maxBytes: limits.maxBytes, connectTimeoutMs: limits.connectTimeoutMs },
      limits.hopInThread,
      signal,
    )
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
