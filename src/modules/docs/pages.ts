// Server-rendered HTML pages: the error reference every `docs` link points to, and the reset form that
// reset mails link to. No external assets, so they work on an air-gapped network.
import { ERROR_CATALOGUE, ERROR_CODES } from '../../shared/errors'

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.6rem}h2{font-size:1.15rem;margin-top:2rem}code{background:#f2f2f2;padding:.1em .3em;border-radius:3px}
dt{font-weight:600;margin-top:.5rem}dd{margin-left:1rem}section:target{background:#fff8d6;outline:2px solid #e6c200;padding:0 .5rem}
label{display:block;margin:.8rem 0 .2rem}input{font:inherit;padding:.4rem;width:100%;max-width:24rem}button{font:inherit;margin-top:1rem;padding:.4rem 1rem}
#result{margin-top:1rem;white-space:pre-wrap}`

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

export function resetPasswordPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>alttext — reset password</title><style>${STYLE}</style></head>
<body><main>
<h1>Reset your alttext password</h1>
<p>Choosing a new password revokes every API key of the account and issues one new key, shown once below.</p>
<form id="reset">
<label for="token">Reset token</label><input id="token" name="token" required autocomplete="off">
<label for="new_password">New password (8 to 128 characters)</label><input id="new_password" name="new_password" type="password" minlength="8" maxlength="128" required autocomplete="new-password">
<button type="submit" id="submit">Set new password</button>
</form>
<div id="result" role="status" aria-live="polite"></div>
<div id="key-box" hidden>
<label for="new-key">Your new API key (shown only now)</label>
<input id="new-key" readonly>
<button type="button" id="copy">Copy the key</button>
</div>
<script src="/docs/assets/reset-password.js"></script>
</main></body></html>`
}

/**
 * The reset form's script. The token leaves the address bar at once; the form is disabled while the reset
 * runs and stays disabled after it worked, because a second submit would revoke the key the first one showed.
 */
export const RESET_PASSWORD_SCRIPT = `'use strict'
const form = document.getElementById('reset')
const submit = document.getElementById('submit')
const out = document.getElementById('result')
const keyBox = document.getElementById('key-box')
const keyField = document.getElementById('new-key')
document.getElementById('token').value = new URLSearchParams(location.search).get('token') || ''
history.replaceState(null, '', location.pathname)
let done = false
form.addEventListener('submit', async (event) => {
  event.preventDefault()
  if (done || submit.disabled) return
  submit.disabled = true
  out.textContent = 'Resetting…'
  const body = { token: document.getElementById('token').value.trim(), new_password: document.getElementById('new_password').value }
  try {
    const res = await fetch('/api/reset-password', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const data = await res.json().catch(() => ({}))
    if (!res.ok) {
      out.textContent = 'Failed: ' + ((data.error && data.error.message) || res.status)
      submit.disabled = false
      return
    }
    done = true
    for (const field of form.elements) field.disabled = true
    out.textContent = data.message
    keyField.value = data.api_key
    keyBox.hidden = false
    keyField.focus()
    keyField.select()
  } catch {
    out.textContent = 'Failed: the service could not be reached. Try again.'
    submit.disabled = false
  }
})
document.getElementById('copy').addEventListener('click', async () => {
  keyField.select()
  try {
    await navigator.clipboard.writeText(keyField.value)
    out.textContent = 'The key is copied. Store it now: it is not shown again.'
  } catch {
    out.textContent = 'Copy it by hand (it is selected): it is not shown again.'
  }
})
`

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
