// Probes: liveness answers whatever else is wrong; readiness checks the database, the model server and
// Redis. Neither is rate limited (a load balancer polls them from one address); readiness bounds its own
// cost instead (checks start at most every READINESS_MIN_INTERVAL_MS, shared by the requests that wait).
import { Elysia } from 'elysia'
import { jsonSchema } from '../../http/openapi-doc'
import { errorBody } from '../../shared/errors'
import { READINESS_MIN_INTERVAL_MS } from '../../shared/limits'
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
          'The database takes a write, the model server answers, and the model is pulled and sees images on at least one model host (`hosts` counts the healthy ones, without addresses); with ALTTEXT_REDIS_URL, Redis takes a write too. 503 `not_ready` with the failed checks otherwise. The model check is cached for a few seconds. On PostgreSQL `checks.changes` says whether the replica hears the change feed; it is reported, 200 or 503, but never fails readiness. ' +
          `Not rate limited: checks start at most every ${READINESS_MIN_INTERVAL_MS} ms, one at a time, and each request gets the first that starts after it arrived.`,
        operationId: 'getReady',
        tags: ['Operations'],
        responses: {
          200: { description: 'Ready.', content: { 'application/json': { schema: jsonSchema(ReadyResponse) } } },
          503: {
            description: '`not_ready`: a check failed; the body has `error` and `checks`.',
            content: { 'application/json': { schema: jsonSchema(NotReadyResponse) } },
          },
        },
      },
    },
  )
}
