// What one audit run needs to reach a site: the gate (which addresses, which private fields), the
// per-host scheduler and the trust store. Built from the settings by the command; the render helper
// takes the same gate for Chromium's requests.
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { resolve } from 'node:path'
import type { HostResolver } from '../../../intake/types'
import { UsageError } from '../../shared/args'
import { type Cookie, parseCookieFile } from './cookies'
import { createRequestGate, type SiteGate } from './gate'
import { parseHeaderFlags } from './headers'
import { trustedCa } from './http'
import { createHostScheduler, type HostScheduler, realTimer, type Timer } from './politeness'

/** The crawl's flags as parsed by options.ts: raw --header strings, the --cookie-file path, --allow-private entries. */
export type SiteSettings = { sitemap: boolean; headers: string[]; cookieFile: string | undefined; allowPrivate: string[] }

export type SiteAccess = {
  gate: SiteGate
  scheduler: HostScheduler
  /** The CA list for TLS (NODE_EXTRA_CA_CERTS added), or undefined for the runtime's own. */
  ca: string[] | undefined
  timer: Timer
}

export type SiteAccessOptions = {
  auditedOrigins: Iterable<string>
  headers?: Record<string, string>
  cookies?: readonly Cookie[]
  allowPrivate?: string[]
  /** Milliseconds since the epoch, for cookie expiry. */
  clock?: () => number
  timer?: Timer
  resolve?: HostResolver
  ca?: string[]
}

export function createSiteAccess(options: SiteAccessOptions): SiteAccess {
  const timer = options.timer ?? realTimer
  return {
    gate: createRequestGate({
      auditedOrigins: options.auditedOrigins,
      allowPrivate: options.allowPrivate ?? [],
      headers: options.headers ?? {},
      cookies: options.cookies ?? [],
      now: options.clock ?? Date.now,
      resolve: options.resolve,
    }),
    scheduler: createHostScheduler(timer),
    ca: options.ca,
    timer,
  }
}

/**
 * The site access of a run from its settings: --header checked, --cookie-file read (a UsageError names
 * the line of a bad one), NODE_EXTRA_CA_CERTS of `env` trusted.
 */
export function siteAccessFor(
  settings: SiteSettings,
  context: { auditedOrigins: Iterable<string>; cwd: string; env: Record<string, string | undefined>; clock: () => number },
): SiteAccess {
  const headers = parseHeaderFlags(settings.headers)
  let cookies: Cookie[] = []
  if (settings.cookieFile !== undefined) {
    let text: string
    try {
      text = readFileSync(resolve(context.cwd, settings.cookieFile), 'utf8')
    } catch (error) {
      throw new UsageError(`--cookie-file ${settings.cookieFile}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
    }
    cookies = parseCookieFile(text, settings.cookieFile)
    if (cookies.length === 0) throw new UsageError(`--cookie-file ${settings.cookieFile} holds no cookies`)
  }
  const auditedOrigins = [...context.auditedOrigins]
  // Files alone reach no network: the variable is not read for them.
  const ca = auditedOrigins.length > 0 ? trustedCa(context.env.NODE_EXTRA_CA_CERTS) : undefined
  return createSiteAccess({ auditedOrigins, headers, cookies, allowPrivate: settings.allowPrivate, clock: context.clock, ca })
}

/** A host name as ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS takes one. */
const HOST_ENTRY = /^[a-z0-9.-]+$/u

/** --allow-private entries as the service reads ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: host names (exact), IPs, CIDRs; lower-cased. */
export function checkAllowPrivate(entries: string[]): string[] {
  return entries.map((raw) => {
    const entry = raw.toLowerCase()
    const bad = () => new UsageError(`--allow-private ${JSON.stringify(raw)} is not a host name, IP address or CIDR`)
    const [address, bits, extra] = entry.split('/')
    if (extra !== undefined) throw bad()
    const bare = address!.replace(/^\[|\]$/gu, '')
    if (bits !== undefined) {
      const family = isIP(bare)
      const max = family === 4 ? 32 : family === 6 ? 128 : -1
      if (max < 0 || !/^\d{1,3}$/u.test(bits) || Number(bits) > max) throw bad()
      return `${bare}/${bits}`
    }
    if (isIP(bare) !== 0 || HOST_ENTRY.test(bare)) return bare
    throw bad()
  })
}
