// The public URL check of `alttext doctor`: ALTTEXT_PUBLIC_URL against the address the service listens on.
import { isIP } from 'node:net'
import type { Config } from '../../../config'
import { type CheckResult, result } from '../result'

const isLoopbackHost = (host: string) => {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  return bare === 'localhost' || bare.endsWith('.localhost') || bare === '::1' || (isIP(bare) === 4 && bare.startsWith('127.'))
}

/** HOST unset, 0.0.0.0 or :: (in any spelling, dual-stack): the service listens on every address of the machine. */
const isAllAddresses = (host: string) => {
  const bare = host.replace(/^\[|\]$/g, '')
  if (bare === '' || bare === '0.0.0.0') return true
  return isIP(bare) === 6 && bare.split(':').every((group) => /^0*$/.test(group))
}

const defaultPort = (url: URL) => Number(url.port || (url.protocol === 'https:' ? 443 : 80))

/** ALTTEXT_PUBLIC_URL goes into reset links, `docs` links and the cookie's Secure flag: it must be where users reach this service. */
export function publicUrlCheck(config: Config): CheckResult {
  const name = 'public URL'
  const url = new URL(config.publicUrl)
  const listen = config.listenAddresses.map((address) => `${isIP(address) === 6 ? `[${address}]` : address}:${config.port}`).join(' and ')
  const fix = 'set ALTTEXT_PUBLIC_URL to the address users and their browsers reach this service at, e.g. https://alttext.example.org'
  if (url.pathname !== '/')
    return result('public_url', name, 'fail', `${config.publicUrl} has a path; the service serves its pages and API at the root of its address`, fix)
  if (isLoopbackHost(url.hostname)) {
    if (defaultPort(url) !== config.port)
      return result('public_url', name, 'fail', `${config.publicUrl} names port ${defaultPort(url)}, but the service listens on ${listen}`, fix)
    // The defaults (README's start): right for this machine, wrong for the others it also listens for.
    if (isAllAddresses(config.host))
      return result(
        'public_url',
        name,
        'warn',
        `${config.publicUrl} works on this machine; the service listens on ${listen}, and other machines that reach it would get reset and docs links to localhost, that is to themselves`,
        'before other machines use it, set ALTTEXT_PUBLIC_URL to the address they reach this service at, e.g. https://alttext.example.org',
      )
    if (!isLoopbackHost(config.host))
      return result(
        'public_url',
        name,
        'fail',
        `${config.publicUrl} is this machine's own name, but the service listens on ${listen} only: its reset and docs links would reach nothing`,
        fix,
      )
    return result('public_url', name, 'pass', `${config.publicUrl}, on this machine only (listens on ${listen})`)
  }
  if (url.protocol === 'https:')
    return result('public_url', name, 'pass', `${config.publicUrl} (TLS ended by a proxy in front of ${listen}); cookies are Secure`)
  if (isLoopbackHost(config.host))
    return result('public_url', name, 'pass', `${config.publicUrl}, through a proxy on this machine to ${listen}; plain http: cookies are not marked Secure`)
  return result('public_url', name, 'pass', `${config.publicUrl} (listens on ${listen}); plain http: cookies are not marked Secure`)
}
