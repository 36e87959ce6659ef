import type { Env } from '../../../config'
import type { RequestGate } from '../crawl/gate'
import { trustedCa as crawlTrustedCa } from '../crawl/http'

export type { RequestGate }

/** http and https only, no headers added: what a plain fetch of the audit allows, for when no other gate is given. */
export const httpOnlyGate: RequestGate = {
  check: async (url) => (url.protocol === 'http:' || url.protocol === 'https:' ? null : `not http(s): ${url.protocol}`),
  headersFor: () => ({}),
}

/** Redirect hops followed for one request, as browsers do (Chromium's limit is 20). */
const MAX_REDIRECTS = 10
/** Headers that belong to one connection, or that this module sets itself. */
const NOT_FORWARDED = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'cookie', 'proxy-authorization', 'upgrade', 'te'])
/** Headers of an answer that no longer describe the body handed on (fetch has decoded it). */
const NOT_RETURNED = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive'])

export type GatedRequest = { method: string; headers: Record<string, string>; body?: Uint8Array | null }

export type GatedAnswer =
  | { ok: true; url: URL; status: number; headers: Record<string, string>; body: Uint8Array }
  | { ok: false; refused: boolean; error: string }

export type GatedFetchOptions = {
  gate: RequestGate
  signal: AbortSignal
  maxBytes: number
  /** The `ca` option of fetch: undefined for the runtime's own trust store. */
  ca: string[] | undefined
}

/** Fetches `url` hop by hop, each address checked by the gate first; the body read up to `maxBytes`. */
export async function gatedFetch(url: URL, request: GatedRequest, options: GatedFetchOptions): Promise<GatedAnswer> {
  let target = url
  let { method } = request
  let body = request.body ?? undefined
  const forwarded: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) if (!NOT_FORWARDED.has(name.toLowerCase())) forwarded[name.toLowerCase()] = value
  for (let hop = 0; ; hop++) {
    const why = target.protocol === 'http:' || target.protocol === 'https:' ? await options.gate.check(target) : `not http(s): ${target.protocol}`
    if (why !== null) return { ok: false, refused: true, error: `refused ${target.origin}: ${why}` }
    let response: Response
    try {
      const headers = { ...forwarded }
      for (const [name, value] of Object.entries(options.gate.headersFor(target))) headers[name.toLowerCase()] = value
      response = await fetch(target, {
        method,
        headers,
        body: method === 'GET' || method === 'HEAD' ? undefined : body,
        redirect: 'manual',
        signal: options.signal,
        ...(options.ca && { tls: { ca: options.ca } }),
      })
    } catch (error) {
      return { ok: false, refused: false, error: `cannot fetch ${target.origin}: ${(error as Error).message}` }
    }
    const location = response.headers.get('location')
    if (response.status >= 300 && response.status < 400 && response.status !== 304 && location !== null) {
      await response.body?.cancel().catch(() => {})
      if (hop >= MAX_REDIRECTS) return { ok: false, refused: false, error: `more than ${MAX_REDIRECTS} redirects` }
      try {
        target = new URL(location, target)
      } catch {
        return { ok: false, refused: false, error: `a redirect to an unreadable address` }
      }
      // As browsers do: 303, and 301/302 after a POST, become a GET without the body.
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET'
        body = undefined
        delete forwarded['content-type']
      }
      // A hop to another origin keeps no credentials the page itself set.
      if (target.origin !== url.origin) delete forwarded.authorization
      continue
    }
    const read = await readCapped(response, options.maxBytes)
    if ('error' in read) return { ok: false, refused: false, error: read.error }
    const headers: Record<string, string> = {}
    for (const [name, value] of response.headers) if (!NOT_RETURNED.has(name)) headers[name] = value
    // Several Set-Cookie headers are one line each (Headers joins them with ", ", which a date breaks).
    const cookies = response.headers.getSetCookie()
    if (cookies.length > 1) headers['set-cookie'] = cookies.join('\n')
    return { ok: true, url: target, status: response.status, headers, body: read.bytes }
  }
}

async function readCapped(response: Response, maxBytes: number): Promise<{ bytes: Uint8Array } | { error: string }> {
  if (Number(response.headers.get('content-length')) > maxBytes) {
    await response.body?.cancel().catch(() => {})
    return { error: `larger than ${maxBytes / 1024 / 1024} MB` }
  }
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for await (const chunk of response.body ?? []) {
      size += chunk.byteLength
      if (size > maxBytes) {
        await response.body?.cancel().catch(() => {})
        return { error: `larger than ${maxBytes / 1024 / 1024} MB` }
      }
      chunks.push(chunk)
    }
  } catch (error) {
    return { error: `cannot fetch: ${(error as Error).message}` }
  }
  return { bytes: Buffer.concat(chunks, size) }
}

/** The CA list for the renderer's fetches: the crawl's (NODE_EXTRA_CA_CERTS of the command's environment). */
export const trustedCa = (env: Env): string[] | undefined => crawlTrustedCa(env.NODE_EXTRA_CA_CERTS)
