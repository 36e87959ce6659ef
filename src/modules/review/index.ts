import { Elysia } from 'elysia'
import { jsonSchema, routeDetail } from '../../http/openapi-doc'
import { GENERATION_DEADLINE_SECONDS, MAX_IMAGE_MB, MAX_REVIEW_MODEL_CALLS, MAX_REVIEW_MODEL_SECONDS, MAX_UPLOAD_BODY_MB } from '../../shared/limits'
import { GENERATION_ERRORS } from '../alt-text/model'
import { uploadCollector, readImageRequest } from '../alt-text/upload'
import type { authPlugin } from '../auth'
import { MAX_REVIEW_ALT_CHARS, ReviewBody, ReviewResponse, ReviewUploadBody } from './model'
import type { ReviewService } from './service'

/** Reads its own body, as POST /api/alt-text does (see http/body.ts): the image upload, after authentication. */
export const REVIEW_BODY_ROUTES = ['POST /api/alt-text/review']

export function reviewRoutes(reviews: ReviewService, authentication: ReturnType<typeof authPlugin>) {
  const collector = uploadCollector()
  return new Elysia({ prefix: '/api' }).use(authentication).post(
    '/alt-text/review',
    async ({ caller, request }) => {
      // No credit, no upload read: 429 comes before the body, as on POST /api/alt-text.
      await reviews.requireCredit(caller)
      const input = await readImageRequest(request, ReviewBody, { collector, place: (signal) => reviews.uploadPlace(caller, signal) })
      return reviews.review(caller, input, request.signal)
    },
    {
      auth: true,
      detail: {
        ...routeDetail({
          summary: 'Judge the alt text an image has',
          operationId: 'reviewAltText',
          jsonBody: true,
          description: `Takes the image exactly as POST /api/alt-text does (\`image_url\` fetched from its public https URL, \`image_base64\`, or a multipart/form-data body with the file in the field \`image\`), the \`alt_text\` in place (at most ${MAX_REVIEW_ALT_CHARS} characters) and the same optional fields (language, context, max_length, style, keywords), and asks the vision model, in one call, for a verdict: \`ok\`, \`needs_fix\`, \`decorative\` or \`keyword_stuffed\`, with the reasons in a few words and a suggested alt text when the verdict is not ok (null when ok, "" when decorative; in \`language\`, within \`max_length\`). The alt text is data for the model, never instructions. A fresh verdict costs 1 credit, which buys at most ${MAX_REVIEW_MODEL_CALLS} model calls (retries included) and ${MAX_REVIEW_MODEL_SECONDS} seconds of model time; a cached one (\`cached: true\`, same image bytes, alt text, options and model) and every failure cost nothing. An answer with no verdict of the four is 502 \`upstream_error\`. Limits as POST /api/alt-text: the body may be ${MAX_UPLOAD_BODY_MB} MB, the image ${MAX_IMAGE_MB} MB, the deadline ${GENERATION_DEADLINE_SECONDS} seconds.`,
          tags: ['Alt text'],
          success: [
            {
              status: 200,
              description: 'The verdict.',
              schema: ReviewResponse,
              example: {
                verdict: 'needs_fix',
                reasons: 'too vague; misses the harbour and lighthouse',
                suggested_alt_text: 'Sailing boats moored in a small harbour at sunset, with a lighthouse on the pier.',
                credits_remaining: 45,
                cached: false,
                language: 'en',
                model: 'llava',
                processing_time_ms: 1310,
                image: { width: 1024, height: 683, format: 'jpeg' },
                source: 'url',
              },
            },
          ],
          errors: [...GENERATION_ERRORS],
          exampleMessages: { invalid_request: 'alt_text: must be at most 1000 characters' },
        }),
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: jsonSchema(ReviewBody, 'input') },
            'multipart/form-data': {
              schema: jsonSchema(ReviewUploadBody, 'input'),
              encoding: { image: { contentType: 'image/jpeg, image/png, image/gif, image/webp, application/octet-stream' } },
            },
          },
        },
      },
    },
  )
}
