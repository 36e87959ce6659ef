// --header 'Name: value' for private pages: checked here so a typo or an injected line break is a usage
// error before anything is sent. Values are secrets (a bearer token, a session): no message repeats one.
import { UsageError } from '../../shared/args'

/** An HTTP field name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/u
/** What a field value may not hold: line breaks and NUL (request smuggling), other control characters but tab. */
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/u
/**
 * Fields the HTTP client owns: the connection and framing (a wrong Content-Length or Transfer-Encoding
 * desynchronises the connection), and Host, which names the origin the gate checked.
 */
const REFUSED = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
  'proxy-authorization',
  'expect',
])

/** The --header flags as one set of request fields (lower-case names; a repeated name joined as HTTP joins it). */
export function parseHeaderFlags(raw: string[]): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [index, flag] of raw.entries()) {
    const colon = flag.indexOf(':')
    const which = `--header #${index + 1}`
    if (colon === -1) throw new UsageError(`${which} is not 'Name: value' (no colon)`)
    const name = flag.slice(0, colon).trim()
    const value = flag.slice(colon + 1).trim()
    if (name === '') throw new UsageError(`${which} has no name before the colon`)
    // The name is shown (it is no secret); the value never is.
    if (!TOKEN.test(name))
      throw new UsageError(`${which}: ${JSON.stringify(name.slice(0, 40))} is not a header name (letters, digits and !#$%&'*+.^_\`|~- only)`)
    const lower = name.toLowerCase()
    if (REFUSED.has(lower)) throw new UsageError(`${which}: ${name} is set by the HTTP client itself and cannot be given`)
    if (BAD_VALUE.test(value)) throw new UsageError(`${which}: the value of ${name} holds a line break or control character`)
    if (value === '') throw new UsageError(`${which}: ${name} has an empty value`)
    const before = headers[lower]
    headers[lower] = before === undefined ? value : `${before}${lower === 'cookie' ? '; ' : ', '}${value}`
  }
  return headers
}
