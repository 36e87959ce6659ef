// GET /metrics: the Prometheus text exposition, for the bearer token of ALTTEXT_METRICS_TOKEN or, without
// one, for loopback clients only (the client address as the rate limits see it, trusted proxies included).
import { Elysia } from 'elysia'
import { routeDetail } from '../../http/openapi-doc'
import type { MetricsService } from './service'

const EXAMPLE = `# HELP alttext_http_requests_total HTTP requests answered, by method, route template (unmatched for a 404) and status.
# TYPE alttext_http_requests_total counter
alttext_http_requests_total{method="POST",route="/api/alt-text",status="200"} 1523
`

const DETAIL = routeDetail({
  summary: 'Prometheus metrics',
  operationId: 'getMetrics',
  description:
    'The Prometheus text exposition format (0.0.4): requests by route template and status, latency per route, generation stages, the queue, the cache, credits charged, model hosts, batch items, webhook attempts, accounts, memory and event-loop delay. With `ALTTEXT_METRICS_TOKEN` set, send it as a bearer token; without it, only clients on the same machine (loopback) are answered. No label holds an email, a key or an image URL. Rate limited like every endpoint.',
  tags: ['Operations'],
  success: [],
  errors: ['invalid_metrics_token', 'metrics_loopback_only'],
})

export function metricsRoutes(metrics: MetricsService, addressOf: (request: Request) => string) {
  return new Elysia().get(
    '/metrics',
    async ({ request }) => {
      metrics.authorize(request.headers.get('authorization'), addressOf(request))
      return new Response(await metrics.render(), { headers: { 'content-type': metrics.contentType, 'cache-control': 'no-store' } })
    },
    {
      detail: {
        ...DETAIL,
        // The token, or nothing (a loopback client).
        security: [{ metricsToken: [] }, {}],
        responses: {
          ...DETAIL.responses,
          200: { description: 'The metrics.', content: { 'text/plain; version=0.0.4': { schema: { type: 'string' }, example: EXAMPLE } } },
        },
      },
    },
  )
}
