// API reference (/docs, rendered from the OpenAPI 3.1 document at /openapi.json) and the error reference. The
// reset page that reset mails link to is part of the console (modules/console).
import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import type { z } from 'zod'
import { componentSchemas, errorSchemaComponent, jsonSchema } from '../../http/openapi-doc'
import { MAX_BATCH_ITEMS } from '../../shared/limits'
import { VERSION } from '../../version'
import { API_DESCRIPTION } from './description'
import { errorReferencePage } from './pages'
import { apiReferencePage, DOCS_CSS, REFERENCE_SCRIPT } from './reference'

/** Pages run only their own scripts from this server, are never framed and never send a Referer. */
export const PAGE_SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
}

const html = (body: string) => new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8', ...PAGE_SECURITY_HEADERS } })

const asset = (body: string, type: string) =>
  new Response(body, { headers: { 'content-type': type, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' } })

export function docsRoutes() {
  const errors = errorReferencePage()
  const spec = openapi({
    // The UI page is ours (below): the plugin's pages load scripts from a CDN, useless when air-gapped.
    provider: null,
    path: '/docs',
    specPath: '/openapi.json',
    // Only request bodies reach this mapper (responses are documented by routeDetail): describe them
    // as input, so fields with defaults are optional.
    mapJsonSchema: { zod: (schema: z.ZodType) => jsonSchema(schema, 'input') },
    exclude: { paths: ['/docs/errors'] },
    documentation: {
      info: { title: 'alttext API', version: VERSION, description: API_DESCRIPTION, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
      // Relative: "Try it" calls the server the page was opened on, whatever its address.
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
        { name: 'Organisations', description: 'Teams: members and roles, invitations, keys of the organisation, its activity log and webhook.' },
        { name: 'Suggestions', description: 'The review queue: proposed alt texts waiting for a reviewer to accept, edit or reject them.' },
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
              "The browser session set by `POST /api/session`; named `__Host-alttext_session` when the service is reached over https. A request that changes something must also come from the service's own pages (`Origin`). A key, when sent, wins.",
          },
        },
        schemas: { Error: errorSchemaComponent as never, ...(componentSchemas() as Record<string, never>) },
      },
      // Operations without a key say so; keyed ones override this with the ApiKey scheme.
      security: [],
    },
  })
  // Rendered from the same document /openapi.json serves, once every route is registered: on the first visit.
  let reference: Promise<string> | undefined
  const referencePage = () =>
    (reference ??= spec
      .handle(new Request('http://localhost/openapi.json'))
      .then((res) => res.json() as Promise<Record<string, unknown>>)
      .then(apiReferencePage)
      .catch((error: unknown) => {
        reference = undefined
        throw error
      }))
  return new Elysia()
    .use(spec)
    .get('/docs', async () => html(await referencePage()), { detail: { hide: true } })
    .get('/docs/assets/docs.css', () => asset(DOCS_CSS, 'text/css; charset=utf-8'), { detail: { hide: true } })
    .get('/docs/assets/api-reference.js', () => asset(REFERENCE_SCRIPT, 'text/javascript; charset=utf-8'), { detail: { hide: true } })
    .get('/docs/errors', () => html(errors), { detail: { hide: true } })
}
