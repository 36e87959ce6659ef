// The API reference: /openapi.json (OpenAPI 3.1) describes all 11 operations of the spec with real JSON
// Schemas, examples, error responses and the X-API-Key scheme; /docs serves the UI; /docs/errors has one
// entry per error code.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import pkg from '../../package.json' with { type: 'json' }
import { ERROR_CATALOGUE, ERROR_CODES, type ErrorCode } from '../../src/shared/errors'
import { startTestService, type TestService } from '../support/service'

type Json = any

let service: TestService
let doc: Json

beforeAll(async () => {
  service = await startTestService()
  const res = await fetch(`${service.url}/openapi.json`)
  expect(res.status).toBe(200)
  doc = await res.json()
})
afterAll(async () => {
  await service.stop()
})

/** Follows `$ref`s ("#/json/pointer", relative to the document root as OpenAPI 3.1 resolves them). */
function deref(node: Json, seen = new Set<string>()): Json {
  if (!node || typeof node !== 'object' || typeof node.$ref !== 'string') return node
  const ref: string = node.$ref
  if (!ref.startsWith('#/')) throw new Error(`external $ref ${ref}`)
  if (seen.has(ref)) throw new Error(`circular $ref ${ref}`)
  seen.add(ref)
  let target: Json = doc
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    target = target?.[part]
  }
  if (target === undefined) throw new Error(`dangling $ref ${ref}`)
  return deref(target, seen)
}

/** The JSON types a schema allows, looking through anyOf/oneOf (nullable fields). */
function typesOf(schema: Json): string[] {
  const s = deref(schema)
  if (!s) return []
  const own = Array.isArray(s.type) ? s.type : s.type ? [s.type] : []
  const alternatives = [...(s.anyOf ?? []), ...(s.oneOf ?? [])].flatMap((alt: Json) => typesOf(alt))
  return [...own, ...alternatives]
}

function findInSchema(schema: Json, key: string): Json {
  const s = deref(schema)
  if (!s) return undefined
  if (s[key] !== undefined) return s[key]
  for (const alt of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) {
    const found = findInSchema(alt, key)
    if (found !== undefined) return found
  }
  return undefined
}

const OPERATIONS = [
  'POST /api/register',
  'POST /api/login',
  'POST /api/forgot-password',
  'POST /api/reset-password',
  'POST /api/alt-text',
  'GET /api/usage',
  'POST /api/validate-key',
  'GET /api/keys',
  'POST /api/keys',
  'POST /api/keys/revoke',
  'POST /api/keys/rotate',
] as const
type Operation = (typeof OPERATIONS)[number]

const AUTHENTICATED: Operation[] = ['POST /api/alt-text', 'GET /api/usage', 'GET /api/keys', 'POST /api/keys', 'POST /api/keys/revoke', 'POST /api/keys/rotate']
const UNAUTHENTICATED: Operation[] = [
  'POST /api/register',
  'POST /api/login',
  'POST /api/forgot-password',
  'POST /api/reset-password',
  'POST /api/validate-key',
]

const BODIES: Partial<Record<Operation, { required: string[]; optional: string[] }>> = {
  'POST /api/register': { required: ['email', 'password'], optional: [] },
  'POST /api/login': { required: ['email', 'password'], optional: [] },
  'POST /api/forgot-password': { required: ['email'], optional: [] },
  'POST /api/reset-password': { required: ['token', 'new_password'], optional: [] },
  // Exactly one of image_url and image_base64 (or a multipart upload): neither is required alone.
  'POST /api/alt-text': {
    required: [],
    optional: ['image_url', 'image_base64', 'language', 'context', 'max_length', 'style', 'keywords', 'detect_decorative'],
  },
  'POST /api/validate-key': { required: ['api_key'], optional: [] },
  'POST /api/keys': { required: [], optional: ['label', 'expires_in_days'] },
  'POST /api/keys/revoke': { required: ['key_prefix'], optional: [] },
  'POST /api/keys/rotate': { required: ['key_prefix'], optional: [] },
}

/** Success status and fields of the decisions. */
const SUCCESS: Record<Operation, { status: number; fields: string[] }> = {
  'POST /api/register': { status: 201, fields: ['api_key', 'prefix', 'email', 'plan', 'credits_total', 'credits_remaining', 'message'] },
  'POST /api/login': { status: 200, fields: ['email', 'plan', 'credits', 'keys'] },
  'POST /api/forgot-password': { status: 202, fields: ['message'] },
  'POST /api/reset-password': { status: 200, fields: ['message', 'api_key', 'prefix'] },
  'POST /api/alt-text': {
    status: 200,
    fields: ['alt_text', 'credits_remaining', 'wcag_compliant', 'character_count', 'processing_time_ms', 'length', 'language', 'cached'],
  },
  'GET /api/usage': { status: 200, fields: ['plan', 'credits', 'api_calls_today', 'period_start', 'period_end'] },
  'POST /api/validate-key': { status: 200, fields: ['valid', 'plan', 'credits_total', 'credits_used', 'credits_remaining'] },
  'GET /api/keys': { status: 200, fields: ['keys'] },
  'POST /api/keys': { status: 201, fields: ['api_key', 'prefix', 'label', 'expires', 'message'] },
  'POST /api/keys/revoke': { status: 200, fields: ['prefix', 'revoked'] },
  'POST /api/keys/rotate': { status: 201, fields: ['api_key', 'prefix', 'label', 'expires', 'message', 'revoked_prefix'] },
}

/** Error codes each operation can answer with (decisions), by HTTP status. */
const ERRORS: Record<Operation, ErrorCode[]> = {
  'POST /api/register': ['invalid_request', 'email_taken', 'rate_limited'],
  'POST /api/login': ['invalid_request', 'invalid_credentials', 'rate_limited'],
  'POST /api/forgot-password': ['invalid_request', 'rate_limited'],
  'POST /api/reset-password': ['invalid_request', 'invalid_token', 'rate_limited'],
  'POST /api/alt-text': [
    'invalid_request',
    'invalid_image_url',
    'missing_api_key',
    'invalid_api_key',
    'key_expired',
    'rate_limited',
    'quota_exceeded',
    'upstream_error',
    'overloaded',
    'upstream_timeout',
  ],
  'GET /api/usage': ['missing_api_key', 'invalid_api_key', 'key_expired', 'rate_limited'],
  'POST /api/validate-key': ['invalid_request', 'rate_limited'],
  'GET /api/keys': ['missing_api_key', 'invalid_api_key', 'key_expired', 'rate_limited'],
  'POST /api/keys': ['invalid_request', 'missing_api_key', 'invalid_api_key', 'key_expired', 'key_limit_reached', 'rate_limited'],
  'POST /api/keys/revoke': ['invalid_request', 'missing_api_key', 'invalid_api_key', 'key_expired', 'key_not_found', 'rate_limited'],
  'POST /api/keys/rotate': ['invalid_request', 'missing_api_key', 'invalid_api_key', 'key_expired', 'key_not_found', 'rate_limited'],
}

function operation(op: Operation): Json {
  const [method, path] = op.split(' ') as [string, string]
  return doc.paths?.[path]?.[method.toLowerCase()]
}

function examplesOf(media: Json): Json[] {
  const list: Json[] = []
  if (media?.example !== undefined) list.push(media.example)
  for (const entry of Object.values<Json>(media?.examples ?? {})) list.push(deref(entry)?.value)
  return list
}

describe('GET /openapi.json', () => {
  test('is OpenAPI 3.1.x, served as JSON, titled and versioned like the package', async () => {
    const res = await fetch(`${service.url}/openapi.json`)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/)
    expect(typeof doc.info?.title).toBe('string')
    expect(doc.info.version).toBe(pkg.version)
    // Relative, so "Try it out" reaches the server the page was opened on, whatever its address.
    expect(doc.servers?.map((s: Json) => s.url)).toEqual(['/'])
  })

  test('covers all 11 operations of the specification', () => {
    for (const op of OPERATIONS) expect({ op, present: operation(op) !== undefined }).toEqual({ op, present: true })
  })

  test('contains no zod internals', () => {
    const text = JSON.stringify(doc)
    for (const internal of ['"_def"', '"~standard"', '"_zod"', '"~validate"']) expect(text).not.toContain(internal)
  })

  test('every tag an operation uses is declared once, with a description', () => {
    const declared: string[] = (doc.tags ?? []).map((t: Json) => t.name)
    expect(new Set(declared).size).toBe(declared.length)
    for (const tag of doc.tags ?? [])
      expect({ tag: tag.name, described: typeof tag.description === 'string' && tag.description.length > 0 }).toEqual({ tag: tag.name, described: true })
    const used = new Set<string>()
    for (const item of Object.values<Json>(doc.paths ?? {})) for (const op of Object.values<Json>(item)) for (const tag of op?.tags ?? []) used.add(tag)
    for (const tag of used) expect({ tag, declared: declared.includes(tag) }).toEqual({ tag, declared: true })
    expect(used).toContain('Batches')
  })

  test('every $ref resolves', () => {
    const refs: string[] = []
    const walk = (node: Json) => {
      if (Array.isArray(node)) node.forEach(walk)
      else if (node && typeof node === 'object') {
        if (typeof node.$ref === 'string') refs.push(node.$ref)
        for (const value of Object.values(node)) walk(value)
      }
    }
    walk(doc)
    for (const ref of new Set(refs)) expect(() => deref({ $ref: ref })).not.toThrow()
  })
})

describe('request bodies are real JSON Schemas', () => {
  for (const [op, fields] of Object.entries(BODIES) as [Operation, { required: string[]; optional: string[] }][]) {
    test(`${op}: object with its fields, required marked`, () => {
      const body = deref(operation(op)?.requestBody)
      expect(body).toBeDefined()
      const schema = deref(body?.content?.['application/json']?.schema)
      expect(schema).toBeDefined()
      expect(schema.type).toBe('object')
      const props = Object.keys(schema.properties ?? {})
      expect(props).toEqual(expect.arrayContaining([...fields.required, ...fields.optional]))
      const required: string[] = schema.required ?? []
      expect(required).toEqual(expect.arrayContaining(fields.required))
      for (const optional of fields.optional) expect({ field: optional, required: required.includes(optional) }).toEqual({ field: optional, required: false })
      for (const name of props) expect(typesOf(schema.properties[name]).length).toBeGreaterThan(0)
    })
  }

  test('POST /api/alt-text: field types and bounds of the decisions', () => {
    const schema = deref(deref(operation('POST /api/alt-text')?.requestBody)?.content?.['application/json']?.schema)
    const p = schema?.properties ?? {}
    expect(typesOf(p.image_url)).toContain('string')
    expect(typesOf(p.language)).toContain('string')
    expect(typesOf(p.max_length)).toContain('integer')
    expect(findInSchema(p.max_length, 'minimum')).toBe(20)
    expect(findInSchema(p.max_length, 'maximum')).toBe(1000)
    expect(findInSchema(p.style, 'enum')).toEqual(expect.arrayContaining(['descriptive', 'concise']))
    expect(typesOf(p.keywords)).toContain('array')
    expect(findInSchema(p.keywords, 'maxItems')).toBe(10)
  })

  test('POST /api/keys: expires_in_days is an integer from 1 to 3650, label at most 100 characters', () => {
    const schema = deref(deref(operation('POST /api/keys')?.requestBody)?.content?.['application/json']?.schema)
    const p = schema?.properties ?? {}
    expect(typesOf(p.expires_in_days)).toContain('integer')
    expect(findInSchema(p.expires_in_days, 'minimum')).toBe(1)
    expect(findInSchema(p.expires_in_days, 'maximum')).toBe(3650)
    expect(typesOf(p.label)).toContain('string')
    expect(findInSchema(p.label, 'maxLength')).toBe(100)
  })

  test('operations without a body declare none', () => {
    expect(operation('GET /api/usage')?.requestBody).toBeUndefined()
    expect(operation('GET /api/keys')?.requestBody).toBeUndefined()
  })
})

describe('success responses', () => {
  for (const op of OPERATIONS) {
    test(`${op}: ${SUCCESS[op].status} with a schema and an example`, () => {
      const response = deref(operation(op)?.responses?.[String(SUCCESS[op].status)])
      expect(response).toBeDefined()
      const media = response?.content?.['application/json']
      const schema = deref(media?.schema)
      expect(schema?.type).toBe('object')
      expect(Object.keys(schema?.properties ?? {})).toEqual(expect.arrayContaining(SUCCESS[op].fields))
      const examples = examplesOf(media)
      expect(examples.length).toBeGreaterThan(0)
      for (const example of examples) expect(Object.keys(example ?? {})).toEqual(expect.arrayContaining(SUCCESS[op].fields))
      // No other 2xx is documented for the operation.
      const twoHundreds = Object.keys(operation(op)?.responses ?? {}).filter((s) => /^2/.test(s))
      expect(twoHundreds).toEqual([String(SUCCESS[op].status)])
    })
  }

  test('examples of full keys have the decided format', () => {
    for (const op of ['POST /api/register', 'POST /api/keys', 'POST /api/keys/rotate', 'POST /api/reset-password'] as Operation[]) {
      const media = deref(operation(op).responses[String(SUCCESS[op].status)]).content['application/json']
      for (const example of examplesOf(media)) {
        expect(example.api_key).toMatch(/^alt_[0-9a-f]{64}$/)
        expect(example.prefix).toMatch(/^alt_[0-9a-f]{8}$/)
        expect(example.api_key.startsWith(example.prefix)).toBe(true)
      }
    }
  })
})

describe('error responses', () => {
  test('the Error component is the structured shape {error: {code, message, docs}} with every code', () => {
    const schema = deref(doc.components?.schemas?.Error)
    expect(schema?.type).toBe('object')
    expect(schema.required).toContain('error')
    const inner = deref(schema.properties?.error)
    expect(inner?.type).toBe('object')
    expect(inner.required).toEqual(expect.arrayContaining(['code', 'message', 'docs']))
    expect(typesOf(inner.properties.message)).toContain('string')
    expect(typesOf(inner.properties.docs)).toContain('string')
    expect(findInSchema(inner.properties.code, 'enum')).toEqual(expect.arrayContaining(ERROR_CODES))
  })

  for (const op of OPERATIONS) {
    test(`${op}: each possible error is documented with the Error schema and an example`, () => {
      const responses = operation(op)?.responses ?? {}
      const byStatus = new Map<number, ErrorCode[]>()
      for (const code of ERRORS[op]) {
        const status = ERROR_CATALOGUE[code].status
        byStatus.set(status, [...(byStatus.get(status) ?? []), code])
      }
      for (const [status, codes] of byStatus) {
        const response = deref(responses[String(status)])
        expect({ op, status, documented: response !== undefined }).toEqual({ op, status, documented: true })
        const media = response.content?.['application/json']
        expect(media?.schema?.$ref).toBe('#/components/schemas/Error')
        const examples = examplesOf(media)
        expect(examples.length).toBeGreaterThan(0)
        const exampleCodes = examples.map((e) => e?.error?.code)
        expect(exampleCodes).toEqual(expect.arrayContaining(codes))
        for (const example of examples) {
          expect(example.error).toEqual({
            code: expect.any(String),
            message: expect.any(String),
            docs: expect.stringContaining(`/docs/errors#${example.error.code}`),
          })
          expect(ERROR_CATALOGUE[example.error.code as ErrorCode]?.status as number | undefined).toBe(status)
        }
      }
      // Nothing documents the framework's default 422.
      expect(responses['422']).toBeUndefined()
    })
  }

  test('the 401 of validate-key is the short form: error is a plain string', () => {
    const response = deref(operation('POST /api/validate-key')?.responses?.['401'])
    expect(response).toBeDefined()
    const media = response.content['application/json']
    const schema = deref(media.schema)
    expect(typesOf(schema.properties?.error)).toEqual(['string'])
    const examples = examplesOf(media)
    expect(examples.length).toBeGreaterThan(0)
    for (const example of examples) expect(typeof example.error).toBe('string')
  })
})

describe('security', () => {
  function apiKeySchemeNames(): string[] {
    const schemes = doc.components?.securitySchemes ?? {}
    return Object.entries<Json>(schemes)
      .filter(([, s]) => {
        const scheme = deref(s)
        return scheme.type === 'apiKey' && scheme.in === 'header' && String(scheme.name).toLowerCase() === 'x-api-key'
      })
      .map(([name]) => name)
  }
  const effectiveSecurity = (op: Operation): Json[] => operation(op)?.security ?? doc.security ?? []

  test('components declare the X-API-Key header scheme', () => {
    expect(apiKeySchemeNames()).toHaveLength(1)
  })

  for (const op of AUTHENTICATED) {
    test(`${op} requires the X-API-Key scheme (or the browser session)`, () => {
      const [scheme] = apiKeySchemeNames()
      const requirements = effectiveSecurity(op)
      expect(requirements.map((r) => Object.keys(r))).toContainEqual([scheme!])
      // Every alternative needs the key or the session cookie (no anonymous `{}` alternative).
      for (const requirement of requirements) expect([[scheme!], ['cookieAuth']]).toContainEqual(Object.keys(requirement))
    })
  }

  for (const op of UNAUTHENTICATED) {
    test(`${op} needs no key`, () => {
      const [scheme] = apiKeySchemeNames()
      for (const requirement of effectiveSecurity(op)) expect(Object.keys(requirement)).not.toContain(scheme!)
    })
  }
})

describe('the decisions are visible in the document', () => {
  test('info.description states the body limit, invalid_request, the rate limits and expires in seconds', () => {
    const text: string = doc.info?.description ?? ''
    expect(text).toContain('64 KiB')
    expect(text).toContain('invalid_request')
    expect(text).toMatch(/rate limit/i)
    expect(text).toMatch(/\b5\b[^\n]*register/)
    expect(text).toMatch(/\b60\b/)
    expect(text).toMatch(/expires[^\n]*seconds/i)
    expect(text).toContain('Retry-After')
  })
})

describe('GET /docs', () => {
  test('serves the interactive reference as HTML pointing at /openapi.json', async () => {
    const res = await fetch(`${service.url}/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    const html = await res.text()
    expect(html).toMatch(/<html/i)
    expect(html).toContain('/openapi.json')
  })

  test('every local script and stylesheet the page loads is served', async () => {
    const html = await (await fetch(`${service.url}/docs`)).text()
    const local = [...html.matchAll(/(?:src|href)="(\/[^"]*)"/g)].map((m) => m[1]!).filter((u) => !u.startsWith('//'))
    for (const path of new Set(local)) {
      const res = await fetch(`${service.url}${path}`)
      expect({ path, status: res.status }).toEqual({ path, status: 200 })
      await res.arrayBuffer()
    }
  })
})

describe('GET /docs is rendered on the server from the document', () => {
  let html: string
  beforeAll(async () => {
    html = await (await fetch(`${service.url}/docs`)).text()
  })

  /** The HTML of one operation's section, found by its operationId. */
  const section = (operationId: string) => {
    const start = html.indexOf(`<section class="operation" id="${operationId}"`)
    return start < 0 ? '' : html.slice(start, html.indexOf('</section>', start))
  }

  test('every operation has a section with its method, path and summary, under its tag', () => {
    for (const [path, item] of Object.entries<Json>(doc.paths))
      for (const [method, op] of Object.entries<Json>(item)) {
        const text = section(op.operationId)
        expect({ op: `${method} ${path}`, found: text.includes(`${method.toUpperCase()}</span> <code>${path}</code>`) }).toEqual({
          op: `${method} ${path}`,
          found: true,
        })
        expect(text).toContain(op.summary.replaceAll("'", '&#39;'))
        const tagStart = html.lastIndexOf('<section class="tag"', html.indexOf(`id="${op.operationId}"`))
        expect(html.slice(tagStart, tagStart + 200)).toContain(`>${op.tags[0]}</h2>`)
      }
  })

  test('request fields show type, required or optional, and their default; error codes link to the error reference', () => {
    const altText = section('generateAltText')
    for (const field of BODIES['POST /api/alt-text']!.optional) expect(altText).toContain(`<code>${field}</code>`)
    expect(altText).toContain('optional, default <code>&quot;en&quot;</code>')
    expect(altText).toContain('integer, optional, 20 to 1000, default <code>125</code>')
    expect(section('register')).toMatch(/<code>email<\/code> <span class="meta">\(string, required/)
    expect(altText).toContain('<a href="/docs/errors#quota_exceeded"><code>quota_exceeded</code></a>')
  })

  test('markup in the document is shown as text', () => {
    // The webhook secret's description holds `<unix seconds>` and `<hex HMAC-SHA256 …>`.
    expect(section('createWebhookSecret')).toContain('&lt;unix seconds&gt;')
    expect(html).not.toMatch(
      /<(?!\/?(?:a|code|p|ul|li|strong|em|h[1-4]|span|div|section|details|summary|pre|form|label|input|textarea|button|header|nav|main|meta|link|script|title|head|body|html|!doctype)\b)/i,
    )
  })
})

describe('GET /docs/errors', () => {
  let html: string
  beforeAll(async () => {
    const res = await fetch(`${service.url}/docs/errors`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    html = await res.text()
  })

  test('has exactly one anchor per error code of the catalogue', () => {
    for (const code of ERROR_CODES) {
      const count = html.split(`id="${code}"`).length - 1
      expect({ code, count }).toEqual({ code, count: 1 })
    }
  })

  test('includes the codes clients meet most', () => {
    for (const code of ['invalid_request', 'invalid_image_url', 'rate_limited', 'quota_exceeded']) expect(html).toContain(`id="${code}"`)
  })

  test('each entry gives the meaning, a typical cause and what to do', () => {
    for (const code of ERROR_CODES) {
      const start = html.indexOf(`id="${code}"`)
      const next =
        ERROR_CODES.map((c) => html.indexOf(`id="${c}"`))
          .filter((i) => i > start)
          .sort((a, b) => a - b)[0] ?? html.length
      const entry = html.slice(start, next)
      expect(entry).toContain(String(ERROR_CATALOGUE[code].status))
      expect(entry).toMatch(/meaning/i)
      expect(entry).toMatch(/cause/i)
      expect(entry).toMatch(/what to do/i)
    }
  })

  test('invalid_image_url tells the operator of an intranet site how to allow its image hosts', () => {
    const start = html.indexOf('id="invalid_image_url"')
    const entry = html.slice(start, html.indexOf('id="invalid_image"', start))
    expect(entry).toContain('ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS')
    expect(entry).toMatch(/intranet/)
  })

  test('the docs link of a live error points at an entry of this page', async () => {
    const res = await service.api.get('/api/no-such-endpoint')
    expect(res.status).toBe(404)
    const docs: string = res.body.error.docs
    expect(docs).toBe('http://alttext.test/docs/errors#not_found')
    expect(html).toContain(`id="${docs.split('#')[1]}"`)
  })
})

describe('docs/configuration.md', () => {
  test('its tables name every variable the service and the client commands read, with its default', async () => {
    const { CLIENT_VARIABLES, CONFIG_VARIABLES } = await import('../../src/config')
    const doc = await Bun.file(new URL('../../docs/configuration.md', import.meta.url)).text()
    // The default cell as read: code marks dropped, links as their text.
    const plain = (cell: string) => cell.replaceAll('`', '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    for (const v of [...CONFIG_VARIABLES, ...CLIENT_VARIABLES]) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${v.name}\` | `))
      expect(row, v.name).toBeDefined()
      expect(plain(row!.split(' | ')[1]!)).toStartWith(v.default)
    }
  })
})

describe('docs/configuration.md', () => {
  /** The rows of its "Every variable" table: name, default and accepted values, as plain text (no backticks, links as their text). */
  async function variableRows(): Promise<Map<string, { default: string; accepted: string }>> {
    const page = await Bun.file(new URL('../../docs/configuration.md', import.meta.url)).text()
    const start = page.indexOf('## Every variable')
    // The section's first table is the service's; the client commands' follows it.
    const clients = page.indexOf('The client commands', start)
    const end = page.indexOf('\n## ', start)
    const table = page.slice(start, clients > start && clients < end ? clients : end)
    const plain = (cell: string) =>
      cell
        .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replaceAll('`', '')
        .trim()
    const rows = table
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split(/(?<!\\)\|/).slice(1, -1))
    return new Map(rows.map(([name, fallback, , accepted]) => [plain(name!), { default: plain(fallback!), accepted: plain(accepted!) }]))
  }

  test('its table names exactly the variables of --help, each with the same default (details in a parenthesis may follow)', async () => {
    const { CONFIG_VARIABLES } = await import('../../src/config')
    const rows = await variableRows()
    expect([...rows.keys()].sort()).toEqual(CONFIG_VARIABLES.map((v) => v.name).sort())
    for (const v of CONFIG_VARIABLES) {
      const shown = rows.get(v.name)!.default
      expect({ name: v.name, default: shown === v.default ? shown : shown.replace(/ \(.*\)$/, '') }).toEqual({ name: v.name, default: v.default })
    }
  })

  test('it and the README show every whole-number range as the service enforces it', async () => {
    const { CONFIG_VARIABLES } = await import('../../src/config')
    const rows = await variableRows()
    const readme = await Bun.file(new URL('../../README.md', import.meta.url)).text()
    for (const v of CONFIG_VARIABLES) {
      const range = v.range && `${v.range.min}-${v.range.max}`
      // 1 000 000 000 is written with spaces, and a range with an en dash.
      const accepted = rows
        .get(v.name)!
        .accepted.replace(/(\d) (?=\d)/g, '$1')
        .replaceAll('–', '-')
      if (range) expect({ name: v.name, accepted }).toEqual({ name: v.name, accepted: `whole number ${range}` })
      const readmeRow = readme.split('\n').find((line) => line.startsWith(`| \`${v.name}\` |`)) ?? ''
      const claimed = [...(readmeRow.match(/\d+-\d+/g) ?? [])]
      expect({ name: v.name, claimed }).toEqual({ name: v.name, claimed: claimed.map(() => range ?? 'no range') })
    }
  })
})
