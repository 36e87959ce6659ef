// Server-rendered HTML pages: the error reference every `docs` link points to, and the Swagger UI page.
// No external assets, so they work on an air-gapped network.
import { ERROR_CATALOGUE, ERROR_CODES } from '../../shared/errors'

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.6rem}h2{font-size:1.15rem;margin-top:2rem}code{background:#f2f2f2;padding:.1em .3em;border-radius:3px}
dt{font-weight:600;margin-top:.5rem}dd{margin-left:1rem}section:target{background:#fff8d6;outline:2px solid #e6c200;padding:0 .5rem}`

export function errorReferencePage(): string {
  const entries = ERROR_CODES.map((code) => {
    const e = ERROR_CATALOGUE[code]
    return `<section id="${code}">
<h2><code>${code}</code> — HTTP ${e.status}: ${escapeHtml(e.title)}</h2>
<dl><dt>Meaning</dt><dd>${escapeHtml(e.meaning)}</dd>
<dt>Typical cause</dt><dd>${escapeHtml(e.cause)}</dd>
<dt>What to do</dt><dd>${escapeHtml(e.action)}</dd></dl>
</section>`
  }).join('\n')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>alttext — error reference</title><style>${STYLE}</style></head>
<body><main>
<h1>alttext error reference</h1>
<p>Every error body has the shape <code>{"error": {"code", "message", "docs"}}</code>, except the 401 of
<code>POST /api/validate-key</code>, whose <code>error</code> is a plain string. <code>docs</code> links to the entry below.
The <code>X-Request-Id</code> header of a response identifies it in the operator log. See also the <a href="/docs">API reference</a>.</p>
<nav><ul>${ERROR_CODES.map((c) => `<li><a href="#${c}"><code>${c}</code></a></li>`).join('')}</ul></nav>
${entries}
</main></body></html>`
}

export function apiReferencePage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>alttext — API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"><style>.links{font:14px system-ui,sans-serif;margin:1rem}</style></head>
<body>
<p class="links">OpenAPI document: <a href="/openapi.json">/openapi.json</a> · Error reference: <a href="/docs/errors">/docs/errors</a></p>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/api-reference.js"></script>
</body></html>`
}

/** Starts Swagger UI on the document of the server the page came from. */
export const API_REFERENCE_SCRIPT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: false })
`
