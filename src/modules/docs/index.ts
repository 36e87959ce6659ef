// API reference (Swagger UI at /docs, OpenAPI 3.1 at /openapi.json) and the error reference. The reset page
// that reset mails link to is part of the console (modules/console).
import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import type { z } from 'zod'
import { componentSchemas, errorSchemaComponent, jsonSchema } from '../../http/openapi-doc'
import { MAX_BATCH_ITEMS } from '../../shared/limits'
import { VERSION } from '../../version'
import { API_REFERENCE_SCRIPT, apiReferencePage, errorReferencePage } from './pages'
// Embedded in the compiled binary (Bun bundles `type: 'file'` imports), so /docs works offline.
import swaggerBundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import { API_DESCRIPTION } from './description'

const asset = (path: string, type: string) => new Response(Bun.file(path), { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } })

/** Pages run only their own scripts from this server, are never framed and never send a Referer. */
export const PAGE_SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
}

const html = (body: string) => new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8', ...PAGE_SECURITY_HEADERS } })

const script = (body: string) =>
  new Response(body, { headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' } })

export function docsRoutes() {
  const errors = errorReferencePage()
  const ui = apiReferencePage()
  return new Elysia()
    .use(
      openapi({
        // The UI page is ours (below): the plugin's pages load scripts from a CDN, useless when air-gapped.
        provider: null,
        path: '/docs',
        specPath: '/openapi.json',
        // Only request bodies reach this mapper (responses are documented by routeDetail): describe them
        // as input, so fields with defaults are optional.
        mapJsonSchema: { zod: (schema: z.ZodType) => jsonSchema(schema, 'input') },
        exclude: { paths: ['/docs/errors'] },
        documentation: {
          info: { title: 'alttext API', version: VERSION, description: API_DESCRIPTION },
          // Relative: "Try it out" calls the server the page was opened on, whatever its address.
          servers: [{ url: '/', description: 'this server' }],
          tags: [
            { name: 'Alt text', description: 'Generate WCAG alt text for an image.' },
            { name: 'Accounts', description: 'Register, sign in, reset or change the password, delete the account.' },
            { name: 'Sessions', description: 'Browser sessions: sign in with a cookie, sign out, sign out everywhere.' },
            { name: 'API keys', description: 'List, create, revoke, rotate and check keys.' },
            { name: 'Usage', description: 'Credits and calls.' },
            {
              name: 'Batches',
              description: `Up to ${MAX_BATCH_ITEMS} images in one request, answered in the background; results by polling or a signed webhook.`,
            },
            { name: 'Webhooks', description: 'The signing secret of batch webhooks, and the delivery log.' },
            { name: 'Operations', description: 'Health and readiness probes, and Prometheus metrics.' },
          ],
          components: {
            securitySchemes: {
              ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The full key: `alt_` followed by 64 lowercase hex characters.' },
              metricsToken: { type: 'http', scheme: 'bearer', description: 'GET /metrics only: the token of ALTTEXT_METRICS_TOKEN.' },
              cookieAuth: {
                type: 'apiKey',
                in: 'cookie',
                name: 'alttext_session',
                description:
                  "The browser session set by `POST /api/session`. A request that changes something must also come from the service's own pages (`Origin`). A key, when sent, wins.",
              },
            },
            schemas: { Error: errorSchemaComponent as never, ...(componentSchemas() as Record<string, never>) },
          },
          // Operations without a key say so; keyed ones override this with the ApiKey scheme.
          security: [],
        },
      }),
    )
    .get('/docs', () => html(ui), { detail: { hide: true } })
    .get('/docs/assets/swagger-ui-bundle.js', () => asset(swaggerBundle, 'text/javascript; charset=utf-8'), { detail: { hide: true } })
    .get('/docs/assets/swagger-ui.css', () => asset(swaggerCss, 'text/css; charset=utf-8'), { detail: { hide: true } })
    .get('/docs/assets/api-reference.js', () => script(API_REFERENCE_SCRIPT), { detail: { hide: true } })
    .get('/docs/errors', () => html(errors), { detail: { hide: true } })
}
