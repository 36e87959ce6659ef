import { Elysia } from 'elysia'
import { routeDetail } from '../../http/openapi-doc'
import { authPlugin } from '../auth'
import type { AuthService } from '../auth/service'
import { AltTextBody, AltTextResponse } from './model'
import type { AltTextService } from './service'

export function altTextRoutes(altText: AltTextService, auth: AuthService) {
  return new Elysia({ prefix: '/api' }).use(authPlugin(auth)).post('/alt-text', ({ caller, body, request }) => altText.generate(caller, body, request.signal), {
    apiKey: true,
    body: AltTextBody,
    parse: 'json',
    detail: routeDetail({
      summary: 'Generate alt text for an image',
      description:
        'Fetches the image from its public https URL, checks it (JPEG, PNG, GIF or WebP by its bytes, at most 10 MB, a pixel cap), and asks the local vision model for WCAG 2.1 alt text. A fresh result costs 1 credit; a cached one (`cached: true`) and every failure cost nothing. The whole request has a 15-second deadline. The response carries both field sets of the specification.',
      tags: ['Alt text'],
      auth: true,
      success: [
        {
          status: 200,
          description: 'The alt text.',
          schema: AltTextResponse,
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
      errors: ['invalid_request', 'invalid_image_url', 'quota_exceeded', 'upstream_error', 'overloaded', 'upstream_timeout'],
      exampleMessages: { invalid_image_url: 'the image is not JPEG, PNG, GIF or WebP (found: svg)', quota_exceeded: 'all 50 credits of this period are used; the period ends 2026-12-01T00:00:00.000Z' },
    }),
  })
}
