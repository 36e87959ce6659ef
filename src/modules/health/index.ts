import { Elysia } from 'elysia'
import { jsonSchema } from '../../http/openapi-doc'
import { errorBody } from '../../shared/errors'
import { VERSION } from '../../version'
import { HealthResponse, ReadyResponse } from './model'
import type { HealthService } from './service'

export function healthRoutes(health: HealthService, publicUrl: string) {
  return new Elysia()
    .get('/health', () => health.liveness(), {
      detail: {
        summary: 'Liveness',
        description: 'The process is up. Not rate limited.',
        tags: ['Operations'],
        responses: {
          200: { description: 'Alive.', content: { 'application/json': { schema: jsonSchema(HealthResponse), example: { status: 'ok', version: VERSION } } } },
        },
      },
    })
    .get(
      '/ready',
      async () => {
        const { ready, checks } = await health.readiness()
        if (ready) return { status: 'ready' as const, version: VERSION, checks }
        const failed = Object.entries(checks)
          .filter(([, c]) => !c.ok)
          .map(([name, c]) => `${name}: ${c.detail}`)
          .join('; ')
        return Response.json({ ...errorBody(publicUrl, 'not_ready', failed), checks }, { status: 503 })
      },
      {
        detail: {
          summary: 'Readiness',
          description:
            'The database answers, the model server answers, and the model is pulled. 503 `not_ready` with the failed checks otherwise. Not rate limited.',
          tags: ['Operations'],
          responses: {
            200: { description: 'Ready.', content: { 'application/json': { schema: jsonSchema(ReadyResponse) } } },
            503: {
              description: '`not_ready`: a check failed; the body has `error` and `checks`.',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
            },
          },
        },
      },
    )
}
