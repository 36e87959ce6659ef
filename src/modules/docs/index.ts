// API reference (Scalar UI at /docs, OpenAPI 3.1 at /openapi.json), the error reference and the reset page.
import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import { z } from 'zod'
import { errorSchemaComponent } from '../../http/openapi-doc'
import { VERSION } from '../../version'
import { apiReferencePage, errorReferencePage, resetPasswordPage } from './pages'
// Embedded in the compiled binary (Bun bundles `type: 'file'` imports), so /docs works offline.
import swaggerBundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import { API_DESCRIPTION } from './description'

const asset = (path: string, type: string) => new Response(Bun.file(path), { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } })

const html = (body: string) => new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8' } })

export function docsRoutes(publicUrl: string) {
  const errors = errorReferencePage()
  const reset = resetPasswordPage()
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
        mapJsonSchema: { zod: (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) },
        exclude: { paths: ['/docs/errors', '/reset-password'] },
        documentation: {
          info: { title: 'alttext API', version: VERSION, description: API_DESCRIPTION },
          servers: [{ url: publicUrl }],
          tags: [
            { name: 'Alt text', description: 'Generate WCAG alt text for an image.' },
            { name: 'Accounts', description: 'Register, sign in, reset the password.' },
            { name: 'API keys', description: 'List, create, revoke, rotate and check keys.' },
            { name: 'Usage', description: 'Credits and calls.' },
            { name: 'Operations', description: 'Health and readiness probes.' },
          ],
          components: {
            securitySchemes: {
              ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The full key: `alt_` followed by 64 lowercase hex characters.' },
            },
            schemas: { Error: errorSchemaComponent as never },
          },
        },
      }),
    )
    .get('/docs', () => html(ui), { detail: { hide: true } })
    .get('/docs/assets/swagger-ui-bundle.js', () => asset(swaggerBundle, 'text/javascript; charset=utf-8'), { detail: { hide: true } })
    .get('/docs/assets/swagger-ui.css', () => asset(swaggerCss, 'text/css; charset=utf-8'), { detail: { hide: true } })
    .get('/docs/errors', () => html(errors), { detail: { hide: true } })
    .get('/reset-password', () => html(reset), { detail: { hide: true } })
}
