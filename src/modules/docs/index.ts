// API reference (Scalar UI at /docs, OpenAPI 3.1 at /openapi.json), the error reference and the reset page.
import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import { z } from 'zod'
import { errorSchemaComponent } from '../../http/openapi-doc'
import { VERSION } from '../../version'
import { errorReferencePage, resetPasswordPage } from './pages'
import { API_DESCRIPTION } from './description'

const html = (body: string) => new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8' } })

export function docsRoutes(publicUrl: string) {
  const errors = errorReferencePage()
  const reset = resetPasswordPage()
  return new Elysia()
    .use(
      openapi({
        path: '/docs',
        specPath: '/openapi.json',
        mapJsonSchema: { zod: z.toJSONSchema },
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
            securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The full key: `alt_` followed by 64 lowercase hex characters.' } },
            schemas: { Error: errorSchemaComponent as never },
          },
        },
      }),
    )
    .get('/docs/errors', () => html(errors), { detail: { hide: true } })
    .get('/reset-password', () => html(reset), { detail: { hide: true } })
}
