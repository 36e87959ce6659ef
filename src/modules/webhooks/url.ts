// The rules a webhook URL must meet when a batch names it (or an organisation webhook is set): the image fetcher's rules for an outgoing
// URL (https, no credentials, a host, at most MAX_URL_LENGTH characters) and, for an IP literal, its
// address policy. A host name is resolved and checked at every delivery attempt, as an image's is.
import { isIP } from 'node:net'
import { checkAnswers, DestinationRefused, MAX_URL_LENGTH, urlProblem } from '../../intake'
import { ApiError } from '../../shared/errors'

/**
 * The URL as it will be called (normalised by the URL parser); throws 400 invalid_request naming the
 * rule and the `field`. `allowPrivateHosts` is ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS (config.allowPrivateImageHosts).
 */
export function checkWebhookUrl(raw: string, allowPrivateHosts: string[], field = 'webhook_url'): string {
  const refuse = (message: string, detail?: string) => new ApiError('invalid_request', `${field}: ${message}`, { detail })
  if (raw.length > MAX_URL_LENGTH) throw refuse(`must be at most ${MAX_URL_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw refuse('must be an absolute https URL')
  }
  switch (urlProblem(url)) {
    case 'scheme':
      throw refuse(`must use https (found ${url.protocol.replace(/:$/, '')})`)
    case 'credentials':
      throw refuse('must not contain a user name or password')
    case 'no-host':
      throw refuse('has no host')
    case 'too-long':
      throw refuse(`must be at most ${MAX_URL_LENGTH} characters`)
    case null:
      break
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  if (isIP(host) !== 0) {
    try {
      checkAnswers(host, [{ address: host }], allowPrivateHosts)
    } catch (error) {
      if (error instanceof DestinationRefused)
        throw refuse('is a blocked address (private, loopback, link-local and other non-public addresses are refused)', error.detail)
      throw error
    }
  }
  return url.href
}
