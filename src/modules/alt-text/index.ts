import { Elysia } from 'elysia'
import { jsonSchema, routeDetail } from '../../http/openapi-doc'
import { GENERATION_DEADLINE_SECONDS, MAX_IMAGE_MB, MAX_UPLOAD_BODY_MB, UPLOAD_RECEIVE_SECONDS } from '../../shared/limits'
import type { authPlugin } from '../auth'
import { AltTextBody, AltTextResponse, AltTextUploadBody, EXAMPLE_ALT_TEXT_RESULT, GENERATION_ERRORS } from './model'
import type { AltTextService, StageTimings } from './service'
import { readAltTextRequest, uploadCollector } from './upload'

/** Routes that read their own body (see http/body.ts): the image upload, read after authentication. */
export const OWN_BODY_ROUTES = ['POST /api/alt-text']

/** `fetch;dur=3.71, prepare;dur=7.90, ...`: the stages a request went through, in ms (W3C Server Timing). */
export function serverTiming(timings: StageTimings): string {
  return Object.entries(timings)
    .map(([stage, ms]) => `${stage};dur=${ms.toFixed(2)}`)
    .join(', ')
}

export function altTextRoutes(altText: AltTextService, authentication: ReturnType<typeof authPlugin>) {
  const collector = uploadCollector()
  return new Elysia({ prefix: '/api' }).use(authentication).post(
    '/alt-text',
    async ({ caller, request, set }) => {
      const timings: StageTimings = {}
      // No credit, no upload read: 429 comes before the body (like 401, which the auth macro sends).
      await altText.requireCredit(caller)
      let receiveMs = 0
      const input = await readAltTextRequest(request, {
        received: (ms) => {
          receiveMs = ms
        },
        collector,
        place: (signal) => altText.uploadPlace(caller, signal),
      })
      // Reading a small JSON body is no stage of its own; reading an upload is.
      if (input.upload) timings.receive = receiveMs
      const result = await altText.generate(caller, input, request.signal, timings)
      set.headers['server-timing'] = serverTiming(timings)
      return result
    },
    {
      auth: true,
      detail: {
        ...routeDetail({
          summary: 'Generate alt text for an image',
          operationId: 'generateAltText',
          jsonBody: true,
          description: `Takes the image from exactly one source: \`image_url\` (fetched from its public https URL), \`image_base64\` (the file in base64 or as a \`data:image/…;base64,\` URL, in the JSON body), or a multipart/form-data body with the file in the field \`image\` and the options as form fields. Checks the image (JPEG, PNG, GIF, WebP, AVIF or SVG by its bytes, at most ${MAX_IMAGE_MB} MB, a pixel cap; an SVG is drawn without loading anything it refers to, an animated GIF or WebP is shown as a grid of up to four key frames, \`animated: true\`) and asks the local vision model for WCAG 2.1 alt text, returned as plain text; with \`detect_decorative\`, the model may instead judge the image purely decorative (\`alt_text: ""\`, \`decorative: true\`). The same bytes give the same cached answer whether fetched or uploaded. A fresh result costs 1 credit, a decorative one too; a cached one (\`cached: true\`) and every failure cost nothing. An account with no credit left gets 429 \`quota_exceeded\` before the image is fetched or read, also for an answer that is cached. The body may be ${MAX_UPLOAD_BODY_MB} MB; it is read as it arrives and refused with 413 the moment it or the decoded image passes its limit. An upload must arrive within ${UPLOAD_RECEIVE_SECONDS} seconds; the ${GENERATION_DEADLINE_SECONDS}-second deadline counts from then. The response carries both field sets of the specification.`,
          tags: ['Alt text'],
          success: [
            {
              status: 200,
              description: 'The alt text.',
              schema: AltTextResponse,
              headers: {
                'Server-Timing': {
                  description:
                    'Where the time went, in ms, for the stages this request went through: fetch (or receive and inspect for an upload), cache, prepare, ocr (reading the text in the image, while waiting for a model slot), queue (waiting for a model slot), model, translate (the further languages of `languages`), charge.',
                  schema: { type: 'string', example: 'fetch;dur=42.10, cache;dur=0.06, prepare;dur=31.75, queue;dur=0.01, model;dur=1385.20, charge;dur=0.42' },
                },
              },
              example: EXAMPLE_ALT_TEXT_RESULT,
            },
          ],
          errors: [...GENERATION_ERRORS],
          exampleMessages: {
            invalid_image_url: 'the image is not JPEG, PNG, GIF, WebP, AVIF or SVG (found: pdf)',
            invalid_image: 'the image is truncated or corrupt (JPEG ends inside its image data)',
            payload_too_large: `the image is over the limit of ${MAX_IMAGE_MB} MB (counted after decoding)`,
            quota_exceeded: 'all 50 credits of this period are used; the period ends 2026-12-01T00:00:00.000Z',
          },
        }),
        // The route reads its own body (see upload.ts), so the document says what it takes.
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: jsonSchema(AltTextBody, 'input') },
            'multipart/form-data': {
              schema: jsonSchema(AltTextUploadBody, 'input'),
              encoding: { image: { contentType: 'image/jpeg, image/png, image/gif, image/webp, application/octet-stream' } },
            },
          },
        },
      },
    },
  )
}
