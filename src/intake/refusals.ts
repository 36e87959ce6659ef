import { ApiError } from '../shared/errors.ts'

/** Every refusal of an image is a 400 invalid_image_url whose message names the rule. */
export function invalidImageUrl(message: string): ApiError {
  return new ApiError('invalid_image_url', message)
}

export function deadlineError(): ApiError {
  return invalidImageUrl('the image did not arrive before the deadline of this request')
}
