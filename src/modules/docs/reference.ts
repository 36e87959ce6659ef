// The API reference page, rendered on the server from the OpenAPI document: plain HTML with landmarks,
// headings and lists, so it reads without a script, passes axe-core, and needs no third-party bundle.
// A small script of ours (REFERENCE_SCRIPT) adds the "Try it" forms.
import { escapeHtml } from './pages'

// The OpenAPI document as JSON: this module only reads it.
type Json = Record<string, any>

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

/** Headers every response carries; the overview says so once instead of every operation. */
const COMMON_HEADERS = new Set(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'X-Request-Id'])

/** Markdown of the document (ours) as HTML; raw HTML in it is shown as text, never as markup. */
const markdown = (text: string | undefined) => (text ? Bun.markdown.html(text, { noHtmlBlocks: true, noHtmlSpans: true, autolinks: false }) : '')

/** Markdown without the paragraph around it, for a description inside a line. */
const inlineMarkdown = (text: string | undefined) =>
  markdown(text)
    .trim()
    .replace(/^<p>([\s\S]*)<\/p>$/, '$1')

const code = (text: string) => `<code>${escapeHtml(text)}</code>`

/** An id fit for HTML and for a URL fragment. */
const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-')

export function apiReferencePage(doc: Json): string {
  const resolve = (node: Json | undefined): Json => {
    let current = node ?? {}
    for (let hops = 0; typeof current.$ref === 'string' && hops < 20; hops++) {
      let target: any = doc
      for (const part of current.$ref.slice(2).split('/')) target = target?.[part.replace(/~1/g, '/').replace(/~0/g, '~')]
      current = target ?? {}
    }
    return current
  }

  /** The schema's alternatives other than null, and whether null is one of them. */
  const alternatives = (schema: Json): { options: Json[]; nullable: boolean } => {
    const s = resolve(schema)
    const list: Json[] = s.anyOf ?? s.oneOf
    if (list) {
      const options = list.map(resolve)
      return { options: options.filter((o) => o.type !== 'null'), nullable: options.some((o) => o.type === 'null') }
    }
    if (Array.isArray(s.type) && s.type.includes('null')) {
      const types = s.type.filter((t: string) => t !== 'null')
      return { options: [{ ...s, type: types.length === 1 ? types[0] : types }], nullable: true }
    }
    return { options: [s], nullable: false }
  }

  const typeName = (schema: Json): string => {
    const { options, nullable } = alternatives(schema)
    const names = options.map((s) => {
      if ('const' in s) return code(JSON.stringify(s.const))
      if (Array.isArray(s.enum)) return `one of ${s.enum.map((v: unknown) => code(String(v))).join(', ')}`
      const type = Array.isArray(s.type) ? s.type.join(' or ') : s.type
      if (type === 'array') return `array of ${typeName(s.items ?? {})}`
      if (type === 'string' && s.format === 'binary') return 'file'
      if (type === 'string' && s.format) return `string (${escapeHtml(s.format)})`
      return escapeHtml(type ?? 'any JSON value')
    })
    return [...new Set(names)].join(' or ') + (nullable ? ' or null' : '')
  }

  const constraints = (schema: Json): string[] => {
    const s = { ...resolve(schema), ...Object.assign({}, ...alternatives(schema).options) }
    const notes: string[] = []
    const range = (min: unknown, max: unknown, unit: string) => {
      if (min !== undefined && max !== undefined) notes.push(`${min} to ${max}${unit}`)
      else if (min !== undefined) notes.push(`at least ${min}${unit}`)
      else if (max !== undefined) notes.push(`at most ${max}${unit}`)
    }
    range(s.minLength, s.maxLength, ' characters')
    range(s.minimum, s.maximum, '')
    range(s.minItems, s.maxItems, ' items')
    if (s.pattern) notes.push(`matches ${code(s.pattern)}`)
    const fallback = resolve(schema).default
    if (fallback !== undefined) notes.push(`default ${code(JSON.stringify(fallback))}`)
    return notes
  }

  /** The object of a schema whose fields are listed: itself, an alternative, or its items'. */
  const objectOf = (schema: Json): Json | undefined => {
    for (const s of alternatives(schema).options) {
      if (s.properties) return s
      if (s.type === 'array' && resolve(s.items).properties) return resolve(s.items)
    }
    return undefined
  }

  const fieldList = (schema: Json, depth = 0): string => {
    const object = objectOf(schema)
    if (!object || depth > 4) return ''
    const required = new Set<string>(object.required ?? [])
    const items = Object.entries<Json>(object.properties).map(([name, property]) => {
      const meta = [typeName(property), required.has(name) ? 'required' : 'optional', ...constraints(property)].join(', ')
      const description = property.description ?? resolve(property).description
      return `<li>${code(name)} <span class="meta">(${meta})</span>${description ? `<div class="description">${markdown(description)}</div>` : ''}${fieldList(property, depth + 1)}</li>`
    })
    return `<ul class="fields">${items.join('')}</ul>`
  }

  const example = (media: Json): unknown => {
    if (media.example !== undefined) return media.example
    const first = Object.values<Json>(media.examples ?? {})[0]
    if (first) return resolve(first).value
    return resolve(media.schema).examples?.[0]
  }

  const exampleBlock = (value: unknown, label: string) =>
    value === undefined
      ? ''
      : `<details><summary>${label}</summary><pre><code>${escapeHtml(typeof value === 'string' ? value : JSON.stringify(value, null, 2))}</code></pre></details>`

  const security = (operation: Json): string => {
    const requirements: Json[] = operation.security ?? doc.security ?? []
    const schemes = requirements.flatMap((r) => Object.keys(r))
    if (schemes.length === 0) return 'none'
    const names = schemes.map((name) => {
      const scheme = doc.components?.securitySchemes?.[name] ?? {}
      if (scheme.type === 'apiKey' && scheme.in === 'header') return `the ${code(scheme.name)} header`
      if (scheme.type === 'apiKey' && scheme.in === 'cookie') return `the browser session (cookie ${code(scheme.name)})`
      if (scheme.type === 'http' && scheme.scheme === 'bearer') return 'a bearer token'
      return escapeHtml(name)
    })
    const optional = requirements.some((r) => Object.keys(r).length === 0)
    return `${names.join(' or ')}${optional ? ' (when configured)' : ''}`
  }

  const parametersSection = (id: string, parameters: Json[]) => {
    if (parameters.length === 0) return ''
    const items = parameters.map((p) => {
      const meta = [`in ${p.in}`, typeName(p.schema ?? {}), p.required ? 'required' : 'optional', ...constraints(p.schema ?? {})].join(', ')
      const description = p.description ?? resolve(p.schema).description
      return `<li>${code(p.name)} <span class="meta">(${meta})</span>${description ? `<div class="description">${markdown(description)}</div>` : ''}</li>`
    })
    return `<h4 id="${id}-parameters">Parameters</h4><ul class="fields">${items.join('')}</ul>`
  }

  const requestSection = (id: string, body: Json | undefined) => {
    if (!body) return ''
    const parts = Object.entries<Json>(body.content ?? {}).map(
      ([type, media]) =>
        `<p>As ${code(type)}${body.required ? '' : ' (optional)'}:</p>${media.schema?.description ? markdown(media.schema.description) : ''}${fieldList(media.schema)}${exampleBlock(example(media), `Example ${escapeHtml(type)} body`)}`,
    )
    return `<h4 id="${id}-body">Request body</h4>${parts.join('')}`
  }

  const responsesSection = (id: string, responses: Json) => {
    const items = Object.entries<Json>(responses).map(([status, raw]) => {
      const response = resolve(raw)
      const parts: string[] = []
      for (const [type, media] of Object.entries<Json>(response.content ?? {})) {
        if (media.schema?.$ref === '#/components/schemas/Error') {
          const codes = Object.keys(media.examples ?? {})
          parts.push(
            `<ul class="codes">${codes
              .map((c) => `<li><a href="/docs/errors#${escapeHtml(c)}">${code(c)}</a>: ${escapeHtml(media.examples[c].summary ?? '')}</li>`)
              .join('')}</ul>`,
          )
        } else {
          parts.push(`${fieldList(media.schema)}${exampleBlock(example(media), `Example ${escapeHtml(type)} answer`)}`)
        }
      }
      const headers = Object.entries<Json>(response.headers ?? {}).filter(([name]) => !COMMON_HEADERS.has(name))
      if (headers.length)
        parts.push(`<ul class="fields">${headers.map(([name, h]) => `<li>Header ${code(name)}: ${inlineMarkdown(resolve(h).description)}</li>`).join('')}</ul>`)
      const isError = Object.values<Json>(response.content ?? {}).some((m) => m.schema?.$ref === '#/components/schemas/Error')
      const summary = isError ? '' : ` ${inlineMarkdown(response.description)}`
      return `<li><p><strong>${escapeHtml(status)}</strong>${summary}</p>${parts.join('')}</li>`
    })
    return `<h4 id="${id}-responses">Responses</h4><ul class="responses">${items.join('')}</ul>`
  }

  /** A form the script sends; its fields are named `<where>:<name>`. Hidden until the script runs. */
  const tryForm = (id: string, method: string, path: string, operation: Json) => {
    const fields: string[] = []
    for (const p of (operation.parameters ?? []) as Json[]) {
      const fieldId = `${id}-try-${slug(`${p.in}-${p.name}`)}`
      fields.push(
        `<p><label for="${fieldId}">${escapeHtml(p.name)} <span class="meta">(${p.in}${p.required ? ', required' : ''})</span></label><input id="${fieldId}" name="${escapeHtml(`${p.in}:${p.name}`)}"${p.required ? ' required' : ''} autocomplete="off"></p>`,
      )
    }
    const json = operation.requestBody?.content?.['application/json']
    if (json) {
      const value = example(json)
      fields.push(
        `<p><label for="${id}-try-body">JSON body</label><textarea id="${id}-try-body" name="body:json" rows="6" spellcheck="false">${escapeHtml(value === undefined ? '{}' : JSON.stringify(value, null, 2))}</textarea></p>`,
      )
    }
    return `<details class="try" data-try hidden><summary>Try it</summary>
<form data-method="${method.toUpperCase()}" data-path="${escapeHtml(path)}">${fields.join('')}
<button type="submit">Send ${method.toUpperCase()} ${escapeHtml(path)}</button>
<div class="result" role="status"></div></form></details>`
  }

  const operationSection = (method: string, path: string, operation: Json) => {
    const id = escapeHtml(operation.operationId ?? slug(`${method}-${path}`))
    return `<section class="operation" id="${id}" aria-labelledby="${id}-title">
<h3 id="${id}-title"><span class="method">${method.toUpperCase()}</span> ${code(path)} <span class="summary">${escapeHtml(operation.summary ?? '')}</span></h3>
${markdown(operation.description)}
<p><strong>Authentication:</strong> ${security(operation)}</p>
${parametersSection(id, operation.parameters ?? [])}${requestSection(id, operation.requestBody)}${responsesSection(id, operation.responses ?? {})}
${tryForm(id, method, path, operation)}
</section>`
  }

  // Operations by tag, in the order the document declares the tags; untagged ones last.
  const byTag = new Map<string, { method: string; path: string; operation: Json }[]>()
  for (const tag of (doc.tags ?? []) as Json[]) byTag.set(tag.name, [])
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {}))
    for (const method of METHODS) {
      const operation = item[method]
      if (!operation) continue
      const tag = operation.tags?.[0] ?? 'Other'
      byTag.set(tag, [...(byTag.get(tag) ?? []), { method, path, operation }])
    }
  const tagDescription = (name: string) => ((doc.tags ?? []) as Json[]).find((t) => t.name === name)?.description
  const groups = [...byTag].filter(([, operations]) => operations.length > 0)

  const contents = groups
    .map(
      ([tag, operations]) =>
        `<li><a href="#tag-${slug(tag)}">${escapeHtml(tag)}</a><ul>${operations
          .map(
            ({ method, path, operation }) =>
              `<li><a href="#${escapeHtml(operation.operationId)}"><span class="method">${method.toUpperCase()}</span> ${escapeHtml(path)}</a></li>`,
          )
          .join('')}</ul></li>`,
    )
    .join('')

  const schemes = Object.entries<Json>(doc.components?.securitySchemes ?? {})
    .map(([name, scheme]) => `<li>${code(name)}: ${inlineMarkdown(scheme.description)}</li>`)
    .join('')

  const sections = groups
    .map(
      ([tag, operations]) => `<section class="tag" id="tag-${slug(tag)}" aria-labelledby="tag-${slug(tag)}-title">
<h2 id="tag-${slug(tag)}-title">${escapeHtml(tag)}</h2>
${markdown(tagDescription(tag))}
${operations.map(({ method, path, operation }) => operationSection(method, path, operation)).join('\n')}
</section>`,
    )
    .join('\n')

  const title = escapeHtml(doc.info?.title ?? 'API')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title} reference</title><link rel="stylesheet" href="/docs/assets/docs.css">
<script src="/docs/assets/api-reference.js" defer></script></head>
<body><a class="skip" href="#main">Skip to the reference</a>
<header class="site"><p><strong>${title}</strong> <span class="meta">version ${escapeHtml(doc.info?.version ?? '')}, OpenAPI ${escapeHtml(doc.openapi ?? '')}</span></p>
<ul><li><a href="/openapi.json">OpenAPI document (JSON)</a></li><li><a href="/docs/errors">Error reference</a></li><li><a href="/">Console</a></li></ul></header>
<div class="layout">
<nav class="contents" aria-label="Operations"><ul><li><a href="#overview">Overview</a></li><li><a href="#authentication">Authentication</a></li>${contents}</ul></nav>
<main id="main">
<h1>${title} reference</h1>
<section id="overview" aria-label="Overview">${markdown(doc.info?.description)}
<p>Every response carries ${[...COMMON_HEADERS].map(code).join(', ')}; the pages list the other headers.</p></section>
<section id="authentication" aria-labelledby="authentication-title"><h2 id="authentication-title">Authentication schemes</h2><ul>${schemes}</ul>
<div data-try hidden><p>The “Try it” forms below send their request from this page to this server. Signed in to the console, they
use that session; or enter a key here (it stays in this page and is sent only with these requests).</p>
<p><label for="try-key">API key for “Try it”</label><input id="try-key" type="password" autocomplete="off" spellcheck="false"></p></div></section>
${sections}
</main></div></body></html>`
}

/** Shows the "Try it" forms and sends them: same origin, so a console session's cookie goes along. */
export const REFERENCE_SCRIPT = `'use strict'
for (const element of document.querySelectorAll('[data-try]')) element.hidden = false

const show = (result, status, text) => {
  const line = document.createElement('p')
  line.textContent = status
  result.replaceChildren(line)
  if (text === undefined) return
  const pre = document.createElement('pre')
  const code = document.createElement('code')
  try {
    code.textContent = JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    code.textContent = text
  }
  pre.append(code)
  result.append(pre)
}

document.addEventListener('submit', async (event) => {
  const form = event.target
  if (!(form instanceof HTMLFormElement) || !form.dataset.path) return
  event.preventDefault()
  const result = form.querySelector('.result')
  let path = form.dataset.path
  const query = new URLSearchParams()
  const headers = {}
  let body
  const key = document.getElementById('try-key')?.value.trim()
  if (key) headers['X-API-Key'] = key
  for (const field of form.elements) {
    if (!field.name || field.value === '') continue
    const [where, name] = field.name.split(/:(.*)/)
    if (where === 'path') path = path.replace('{' + name + '}', encodeURIComponent(field.value))
    else if (where === 'query') query.append(name, field.value)
    else if (where === 'header') headers[name] = field.value
    else if (where === 'body') {
      body = field.value
      headers['Content-Type'] = 'application/json'
    }
  }
  show(result, 'Sending…')
  try {
    const response = await fetch(path + (query.size ? '?' + query : ''), { method: form.dataset.method, headers, body })
    show(result, 'HTTP ' + response.status + ' ' + response.statusText, await response.text())
  } catch (error) {
    show(result, 'The request failed: ' + error.message)
  }
})
`

/** The stylesheet of both documentation pages: the console's colours, light and dark. */
export const DOCS_CSS = `:root{color-scheme:light dark;--bg:#fff;--surface:#f3f4f6;--text:#1b1c1f;--muted:#4a4f57;--border:#767c85;--link:#0b57d0;--on-link:#fff;--target:#fff3cd}
@media (prefers-color-scheme:dark){:root{--bg:#15171a;--surface:#202329;--text:#e8eaed;--muted:#b9bec6;--border:#8b929c;--link:#8ab4f8;--on-link:#0b1d3a;--target:#3d3000}}
*{box-sizing:border-box}
html{background:var(--bg);color:var(--text)}
body{margin:0;font:16px/1.5 system-ui,sans-serif}
a{color:var(--link)}
:focus-visible{outline:3px solid var(--link);outline-offset:2px}
.skip{position:absolute;left:-10000px;top:.5rem;background:var(--bg);padding:.5rem}
.skip:focus{left:.5rem}
header.site{display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;align-items:center;padding:.5rem 1rem;border-bottom:1px solid var(--border)}
header.site p{margin:0}
header.site ul,nav.contents ul{list-style:none;margin:0;padding:0}
header.site ul{display:flex;flex-wrap:wrap;gap:0 1rem}
header.site a,nav a{display:inline-block;min-height:24px;padding:.125rem 0}
.layout{display:grid;grid-template-columns:minmax(0,1fr)}
nav.contents{padding:1rem;border-bottom:1px solid var(--border);overflow-wrap:anywhere}
nav.contents ul ul{padding-left:1rem;margin-bottom:.5rem}
@media (min-width:64rem){.layout{grid-template-columns:18rem minmax(0,1fr)}nav.contents{position:sticky;top:0;align-self:start;max-height:100vh;overflow-y:auto;border-bottom:0;border-right:1px solid var(--border)}}
main{padding:0 1rem 3rem;max-width:60rem;min-width:0;overflow-wrap:anywhere}
.single main{margin:0 auto}
h1{font-size:1.75rem}h2{font-size:1.4rem;margin-top:2rem}h3{font-size:1.15rem}h4{font-size:1rem;margin:1.25rem 0 .25rem}
.meta{color:var(--muted)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.875em}
code{background:var(--surface);padding:.05em .3em;border-radius:3px;overflow-wrap:anywhere}
pre{background:var(--surface);padding:.75rem;border-radius:6px;white-space:pre-wrap;overflow-wrap:anywhere}
pre code{background:none;padding:0;font-size:1em}
.method{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-weight:700}
section.tag{border-top:2px solid var(--border);margin-top:2.5rem}
section.operation{border-top:1px solid var(--border);margin-top:1.5rem}
section.operation h3 .summary{display:block;font-weight:400}
:target{scroll-margin-top:.5rem}
section:target>h2,section:target>h3{background:var(--target)}
ul.fields,ul.responses,ul.codes{padding-left:1.25rem}
.description>:first-child{margin-top:0}.description>:last-child{margin-bottom:0}
ul.responses>li>p{margin:.5rem 0 .25rem}
summary{cursor:pointer;min-height:24px;padding:.125rem 0}
details.try{margin-top:1rem;padding:.5rem .75rem;border:1px solid var(--border);border-radius:6px}
label{display:block;font-weight:600}
input,textarea{font:inherit;width:100%;max-width:40rem;padding:.4rem;border:1px solid var(--border);border-radius:4px;background:var(--bg);color:var(--text)}
textarea{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.875em}
button{font:inherit;min-height:44px;padding:.4rem 1rem;border:0;border-radius:6px;background:var(--link);color:var(--on-link);cursor:pointer;overflow-wrap:anywhere}
dt{font-weight:600;margin-top:.5rem}dd{margin-left:1rem}
`
