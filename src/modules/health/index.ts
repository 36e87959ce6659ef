// Probes: liveness answers whatever else is wrong and is never limited (a load balancer polls it); readiness
// checks the database and the model server and is rate limited like any other endpoint.
import { Elysia } from 'elysia'
import { jsonSchema } from '../../http/openapi-doc'
import { errorBody } from '../../shared/errors'
import { VERSION } from '../../version'
import { HealthResponse, NotReadyResponse, ReadyResponse } from './model'
import type { HealthService } from './service'

export function livenessRoutes(health: HealthService) {
  return new Elysia().get('/health', () => health.liveness(), {
    detail: {
      summary: 'Liveness',
      description: 'The process is up. Not rate limited.',
      operationId: 'getHealth',
      tags: ['Operations'],
      responses: {
        200: { description: 'Alive.', content: { 'application/json': { schema: jsonSchema(HealthResponse), example: { status: 'ok', version: VERSION } } } },
      },
    },
  })
}

export function readinessRoutes(health: HealthService, publicUrl: string) {
  return new Elysia().get(
    '/ready',
    async () => {
      const { ready, checks, hosts } = await health.readiness()
      if (ready) return { status: 'ready' as const, version: VERSION, checks, hosts }
      const failed = Object.entries(checks)
        .filter(([, c]) => !c.ok)
        .map(([name, c]) => `${name}: ${c.detail}`)
        .join('; ')
      return Response.json({ ...errorBody(publicUrl, 'not_ready', failed), checks, hosts }, { status: 503 })
    },
    {
      detail: {
        summary: 'Readiness',
        description:
          'The database takes a write, the model server answers, and the model is pulled and sees images on at least one model host (`hosts` counts the healthy ones, without addresses); with ALTTEXT_REDIS_URL, Redis takes a write too. 503 `not_ready` with the failed checks otherwise. The model check is cached for a few seconds. Rate limited like every endpoint.',
        operationId: 'getReady',
        tags: ['Operations'],
        responses: {
          200: { description: 'Ready.', content: { 'application/json': { schema: jsonSchema(ReadyResponse) } } },
          429: { description: '`rate_limited`.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
          503: {
            description: '`not_ready`: a check failed; the body has `error` and `checks`.',
            content: { 'application/json': { schema: jsonSchema(NotReadyResponse) } },
          },
        },
      },
    },
  )
}
