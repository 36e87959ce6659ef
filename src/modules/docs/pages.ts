// The error reference every `docs` link points to, server-rendered. No external assets, so it works on an
// air-gapped network.
import { ERROR_CATALOGUE, ERROR_CODES } from '../../shared/errors'

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

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
<title>alttext — error reference</title><link rel="stylesheet" href="/docs/assets/docs.css"></head>
<body class="single"><main>
<h1>alttext error reference</h1>
<p>Every error body has the shape <code>{"error": {"code", "message", "docs"}}</code>, except the 401 of
<code>POST /api/validate-key</code>, whose <code>error</code> is a plain string. <code>docs</code> links to the entry below.
The <code>X-Request-Id</code> header of a response identifies it in the operator log. See also the <a href="/docs">API reference</a>.</p>
<nav><ul>${ERROR_CODES.map((c) => `<li><a href="#${c}"><code>${c}</code></a></li>`).join('')}</ul></nav>
${entries}
</main></body></html>`
}
