// Which CAs outgoing TLS trusts (image fetches, webhook deliveries, the audit's crawl and render): the
// runtime's own store, plus an extra CA when the runtime has not loaded it. Kept apart from the intake so
// that the command line uses it without loading the codecs.
import { getCACertificates, rootCertificates } from 'node:tls'

/** The certificates of a PEM bundle as their base64 bodies, whitespace removed, for comparison. */
function certificateBodies(pem: string): string[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map((match) => match[1]!.replace(/\s+/g, ''))
}

/**
 * Whether the runtime's default trust store already holds every certificate of `pem`: Bun, like Node,
 * loads NODE_EXTRA_CA_CERTS at start. Then no `ca` option is needed, and none is better: a `ca` list
 * of ~120 roots is parsed into a fresh TLS context for every connection.
 */
export function runtimeTrustsAll(pem: string): boolean {
  const wanted = certificateBodies(pem)
  if (wanted.length === 0) return false
  let loaded: Set<string>
  try {
    loaded = new Set(getCACertificates('extra').flatMap(certificateBodies))
  } catch {
    return false // a runtime without getCACertificates: pass the list, as before
  }
  return wanted.every((body) => loaded.has(body))
}

/**
 * The `ca` option for outgoing TLS (image fetches, webhook deliveries): undefined (the runtime's own
 * trust store) unless an extra CA is configured that the runtime has not loaded; then the bundled roots
 * with it, since giving `ca` replaces the default trust store.
 */
export function trustedCaList(extraCaPem: string | undefined): string[] | undefined {
  return extraCaPem && !runtimeTrustsAll(extraCaPem) ? [...rootCertificates, extraCaPem] : undefined
}
