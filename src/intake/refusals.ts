import { ApiError } from '../shared/errors.ts'
import type { ImageSource } from './types.ts'

/**
 * Every refusal of an image is a 400 invalid_image_url whose message names the rule. `detail` (what a
 * name resolved to, why a connection failed) goes to the operator log only.
 */
export function invalidImageUrl(message: string, detail?: string): ApiError {
  return new ApiError('invalid_image_url', message, { detail })
}

/** What a client can do about a refused host: ask the operator, who may allow it (where the error page says how). */
const ALLOW_HINT = "; the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS (see /docs/errors#invalid_image_url)"

/**
 * An image host that may not be contacted. A name that does not resolve and one that resolves to a blocked
 * address get one message, so that the client cannot map internal names; an IP literal names no one, so it
 * is called blocked. `detail` (the resolver's answer or error) goes to the operator log only.
 */
export function refusedDestination(host: string, literal: boolean, viaRedirect: boolean, detail: string): ApiError {
  if (literal)
    return invalidImageUrl(
      `${viaRedirect ? 'the image URL redirects to a blocked address' : 'the image host is a blocked address'} (private, loopback or reserved)${ALLOW_HINT}`,
      detail,
    )
  return invalidImageUrl(
    `${
      viaRedirect
        ? 'the image URL redirects to a host that cannot be resolved to an allowed address'
        : `the image host ${host} cannot be resolved to an allowed address`
    }${ALLOW_HINT}`,
    detail,
  )
}

/** The refusal of an image's content by the same rules: invalid_image_url when fetched, invalid_image when uploaded. */
export function imageRefusal(source: ImageSource | undefined, message: string, detail?: string): ApiError {
  return source === 'upload' ? new ApiError('invalid_image', message, { detail }) : invalidImageUrl(message, detail)
}

export function deadlineError(): ApiError {
  return invalidImageUrl('the image did not arrive before the deadline of this request')
}

const RETRY_AFTER = { retryAfterSeconds: 5 }

/** A wait for decoding capacity (memory budget, decode slots, GIF workers) outlasted the request. */
export function capacityError(): ApiError {
  return new ApiError('overloaded', 'the image could not be prepared before the deadline of this request; retry in a few seconds', RETRY_AFTER)
}

/** The owner's earlier images held its share of the intake until this request's deadline. */
export function ownerCapError(perOwner: number): ApiError {
  return new ApiError(
    'overloaded',
    `this account already had ${perOwner} image${perOwner === 1 ? '' : 's'} being fetched or prepared, and this one had to wait past the deadline of this request; retry in a few seconds`,
    RETRY_AFTER,
  )
}

/** The owner's earlier uploads held its upload places until this one's time to arrive ran out. */
export function uploadPlaceError(perOwner: number): ApiError {
  return new ApiError(
    'overloaded',
    `this account already had ${perOwner} uploaded image${perOwner === 1 ? '' : 's'} being received or prepared, and this one waited too long for its turn; retry in a few seconds`,
    RETRY_AFTER,
  )
}

/** The decode budget could not take a large request body (a batch with images) at once. */
export function bodyMemoryError(): ApiError {
  return new ApiError(
    'overloaded',
    'the service holds as many large request bodies and images in memory as it may; this body was not read; retry in a few seconds',
    RETRY_AFTER,
  )
}

export function closedError(): ApiError {
  return new ApiError('overloaded', 'the service is shutting down; retry in a few seconds', RETRY_AFTER)
}
