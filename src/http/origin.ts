// Where a browser request comes from, for requests that use the session cookie: this service's own origin
// is the one of ALTTEXT_PUBLIC_URL, or the one the request itself was addressed to (its Host header).
// Programs that send no Origin and no Sec-Fetch-Site are neither foreign nor proven same-origin.

export type OriginCheck = {
  /** The request comes from another origin: its Origin names one, or its browser says cross-site or same-site. */
  isForeign(request: Request): boolean
  /** The request proves it comes from this service's pages: Origin equal to ours, or Sec-Fetch-Site: same-origin. */
  isSameOrigin(request: Request): boolean
}

/** The host (and port) of an origin header value; null when it is not an http(s) origin (e.g. "null"). */
function hostOf(origin: string): string | null {
  try {
    const url = new URL(origin)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.host : null
  } catch {
    return null
  }
}

export function createOriginCheck(publicUrl: string): OriginCheck {
  const own = new URL(publicUrl).origin
  const matches = (origin: string, request: Request) => {
    if (origin === own) return true
    const host = hostOf(origin)
    return host !== null && host === request.headers.get('host')?.toLowerCase()
  }
  return {
    isForeign(request) {
      const origin = request.headers.get('origin')
      if (origin !== null) return !matches(origin, request)
      const site = request.headers.get('sec-fetch-site')
      return site === 'cross-site' || site === 'same-site'
    },
    isSameOrigin(request) {
      const origin = request.headers.get('origin')
      if (origin !== null) return matches(origin, request)
      return request.headers.get('sec-fetch-site') === 'same-origin'
    },
  }
}
