import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import type { CheckedAddress } from '../../../intake/hop'
import { trustedCaList } from '../../../intake/trust'
import { UsageError } from '../../shared/args'
import { VERSION } from '../../../version'
import type { SiteGate } from './gate'

export const USER_AGENT = `alttext-audit/${VERSION}`
const REDIRECTS = new Set([301, 302, 303, 307, 308])

export type HttpOptions = {
  accept: string
  maxRedirects: number
  timeoutMs: number
  signal?: AbortSignal
  /** Trusted CAs for TLS; undefined for the runtime's own store. */
  ca?: string[]
}

export type Fetched = { ok: true; response: Response; url: URL } | { ok: false; error: string }

/**
 * The trust store for the audit's fetches (crawl and render): NODE_EXTRA_CA_CERTS of the command's
 * environment, read here (Bun reads that variable when a process starts; a command run in-process has its
 * own), then as the service treats its extra CA (trustedCaList).
 */
export function trustedCa(file: string | undefined): string[] | undefined {
  if (file === undefined || file === '') return undefined
  let pem: string
  try {
    pem = readFileSync(file, 'utf8')
  } catch (error) {
    throw new UsageError(`NODE_EXTRA_CA_CERTS: cannot read "${file}": ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`NODE_EXTRA_CA_CERTS: "${file}" holds no PEM certificate`)
  return trustedCaList(pem)
}

/** The checked address in place of the host name, everything else kept. */
function pinned(url: URL, address: CheckedAddress): string {
  const host = address.family === 6 ? `[${address.address}]` : address.address
  return `${url.protocol}//${host}${url.port === '' ? '' : `:${url.port}`}${url.pathname}${url.search}`
}

export async function fetchThrough(gate: SiteGate, start: URL, options: HttpOptions): Promise<Fetched> {
  const timeout = AbortSignal.timeout(options.timeoutMs)
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout
  let url = start
  for (let hops = 0; ; hops++) {
    const via = hops === 0 ? '' : `redirected to ${url.href}: `
    const destination = await gate.destination(url)
    if (!destination.ok) return { ok: false, error: `${via}${destination.reason}` }
    const hostname = url.hostname.replace(/^\[|\]$/gu, '')
    // A pinned host is tried at each checked address in turn, as a client tries a name's addresses.
    const addresses: (CheckedAddress | null)[] = destination.pin ?? [null]
    let response: Response | null = null
    let failure = ''
    for (const address of addresses) {
      try {
        response = await fetch(address ? pinned(url, address) : url.href, {
          headers: { 'user-agent': USER_AGENT, accept: options.accept, ...(address ? { host: url.host } : {}), ...gate.headersFor(url) },
          redirect: 'manual',
          signal,
          tls: { ...(options.ca ? { ca: options.ca } : {}), ...(address && isIP(hostname) === 0 ? { serverName: hostname } : {}) },
        })
        break
      } catch (error) {
        if (signal.aborted) {
          failure = timeout.aborted ? `no answer within ${options.timeoutMs / 1000} s` : 'stopped'
          break
        }
        failure = (error as Error).message
      }
    }
    if (response === null) return { ok: false, error: `${via}cannot fetch: ${failure}` }
    const location = response.headers.get('location')
    if (!REDIRECTS.has(response.status) || location === null) return { ok: true, response, url }
    await response.body?.cancel().catch(() => {})
    if (hops >= options.maxRedirects) return { ok: false, error: `more than ${options.maxRedirects} redirects` }
    try {
      url = new URL(location, url)
    } catch {
      return { ok: false, error: `${via}HTTP ${response.status} with an unreadable Location` }
    }
    url.hash = ''
  }
}

/** The body's first `max` bytes; `cut` when there was more (the rest is never read). */
export async function readCapped(response: Response, max: number): Promise<{ bytes: Uint8Array; cut: boolean }> {
  const chunks: Uint8Array[] = []
  let size = 0
  let cut = false
  const reader = response.body?.getReader()
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      const room = max - size
      if (value.byteLength > room) {
        chunks.push(value.subarray(0, room))
        size = max
        cut = true
        await reader.cancel().catch(() => {})
        break
      }
      chunks.push(value)
      size += value.byteLength
    }
  }
  const bytes = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  return { bytes, cut }
}
