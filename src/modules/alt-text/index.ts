import { Elysia } from 'elysia'
import { routeDetail } from '../../http/openapi-doc'
import type { authPlugin } from '../auth'
import { AltTextBody, AltTextResponse } from './model'
import type { AltTextService, StageTimings } from './service'
import { GENERATION_DEADLINE_SECONDS, MAX_IMAGE_MB } from '../../shared/limits'

/** `fetch;dur=3.71, prepare;dur=7.90, ...`: the stages a request went through, in ms (W3C Server Timing). */
export function serverTiming(timings: StageTimings): string {
  return Object.entries(timings)
    .map(([stage, ms]) => `${stage};dur=${ms.toFixed(2)}`)
    .join(', ')
}

export function altTextRoutes(altText: AltTextService, authentication: ReturnType<typeof authPlugin>) {
  return new Elysia({ prefix: '/api' }).use(authentication).post(
    '/alt-text',
    async ({ caller, body, request, set }) => {
      const timings: StageTimings = {}
      const result = await altText.generate(caller, body, request.signal, timings)
      set.headers['server-timing'] = serverTiming(timings)
      return result
    },
    {
      auth: true,
      body: AltTextBody,
      parse: 'json',
      detail: routeDetail({
        summary: 'Generate alt text for an image',
        operationId: 'generateAltText',
        jsonBody: true,
        description: `Fetches the image from its public https URL, checks it (JPEG, PNG, GIF or WebP by its bytes, at most ${MAX_IMAGE_MB} MB, a pixel cap), and asks the local vision model for WCAG 2.1 alt text, returned as plain text. A fresh result costs 1 credit; a cached one (\`cached: true\`) and every failure cost nothing. An account with no credit left gets 429 \`quota_exceeded\` before the image is fetched, also for an answer that is cached. The whole request has a ${GENERATION_DEADLINE_SECONDS}-second deadline. The response carries both field sets of the specification.`,
        tags: ['Alt text'],
        success: [
          {
            status: 200,
            description: 'The alt text.',
            schema: AltTextResponse,
            headers: {
              'Server-Timing': {
                description:
                  'Where the time went, in ms, for the stages this request went through: fetch, cache, prepare, queue (waiting for a model slot), model, charge.',
                schema: { type: 'string', example: 'fetch;dur=42.10, cache;dur=0.06, prepare;dur=31.75, queue;dur=0.01, model;dur=1385.20, charge;dur=0.42' },
              },
            },
            example: {
              alt_text: 'Sailing boats moored in a small harbour at sunset, with a lighthouse on the pier.',
              credits_remaining: 46,
              wcag_compliant: true,
              character_count: 81,
              processing_time_ms: 1420,
              length: 81,
              language: 'en',
              cached: false,
              wcag_issues: [],
              model: 'llava',
              image: { width: 1024, height: 683, format: 'jpeg' },
            },
          },
        ],
        errors: ['invalid_request', 'invalid_image_url', 'quota_exceeded', 'upstream_error', 'overloaded', 'upstream_timeout', 'database_busy'],
        exampleMessages: {
          invalid_image_url: 'the image is not JPEG, PNG, GIF or WebP (found: svg)',
          quota_exceeded: 'all 50 credits of this period are used; the period ends 2026-12-01T00:00:00.000Z',
        },
      }),
    },
  )
}
