// POST /api/alt-text as an SSRF target: every spelling of a loopback or unspecified address is refused
// before any connection, a redirect from an allowed host to a blocked one is refused, credentials in
// the URL are refused, signed-URL tokens and image bytes stay out of the log, the model server's
// address never reaches a client, and results carry nothing of another account.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { HostResolver } from '../../src/intake'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import type { ApiResponse } from '../support/service'
import { makePng } from '../support/images'

/** POST /api/alt-text with the env's key (or another), typed for the assertions below. */
const generate = (target: AltTextEnv, body: Record<string, unknown>, key = target.key) => target.generate(body, key) as Promise<ApiResponse>

/** A fake DNS: the names below map to loopback, everything else does not exist. No real query ever. */
function fakeResolver(table: Record<string, { address: string; family: 4 | 6 }[]>, seen: string[]): HostResolver {
  return async (hostname) => {
    seen.push(hostname)
    const answer = table[hostname.toLowerCase()]
    if (answer) return answer
    const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`)
    error.code = 'ENOTFOUND'
    throw error
  }
}

/** No allow-list at all: loopback is blocked however it is written. */
let open: AltTextEnv
const openLookups: string[] = []
/** Allow-list holds the host name `localhost` only (mapped to 127.0.0.1 by the fake resolver), not the IP. */
let allowed: AltTextEnv
const allowedLookups: string[] = []
const _size = 500

beforeAll(async () => {
  ;[open, allowed] = await Promise.all([
    startAltTextEnv({
      env: { ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '' },
      overrides: {
        resolveHost: fakeResolver(
          {
            localhost: [{ address: '127.0.0.1', family: 4 }],
            'internal.test': [
              { address: '127.0.0.1', family: 4 },
              { address: '::1', family: 6 },
            ],
          },
          openLookups,
        ),
      },
    }),
    startAltTextEnv({
      env: { ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: 'localhost' },
      overrides: {
        resolveHost: fakeResolver(
          {
            localhost: [{ address: '127.0.0.1', family: 4 }],
            'loopback.test': [{ address: '127.0.0.1', family: 4 }],
          },
          allowedLookups,
        ),
      },
    }),
  ])
})
afterAll(async () => {
  await Promise.all([open.stop(), allowed.stop()])
})
beforeEach(() => {
  open.ollama.reset()
  allowed.ollama.reset()
})

const portOf = (e: AltTextEnv) => new URL(e.images.origin).port
/** https://localhost:PORT/path on the allow-listed env's image server. */
const viaLocalhost = (url: string) => url.replace('https://127.0.0.1:', 'https://localhost:')

/** The operator-log detail of a refusal, found by the response's request id. */
function refusalDetail(target: AltTextEnv, res: ApiResponse): string {
  const id = res.headers.get('x-request-id')
  const line = target.service.logs.find((l) => l.msg === 'request refused' && l.request_id === id)
  return String(line?.detail ?? '')
}

async function expectRefused(target: AltTextEnv, imageUrl: string, rule: RegExp) {
  const res = await generate(target, { image_url: imageUrl })
  expect(res.status).toBe(400)
  expect(res.body.error.code).toBe('invalid_image_url')
  expect(res.body.error.message).toMatch(rule)
  expect(res.body.error.docs).toEndWith('#invalid_image_url')
  expect(target.ollama.chatRequests().length).toBe(0)
  return res
}

describe('SSRF: loopback and unspecified addresses, however written, are never connected to', () => {
  const hosts = ['127.0.0.1', 'localhost', '127.1', '2130706433', '0x7f000001', '0177.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '0.0.0.0', 'internal.test']
  for (const [i, host] of hosts.entries()) {
    test(`https://${host}:PORT/… → 400 blocked`, async () => {
      // The route exists and would answer 200 with a PNG: only the check stands in the way.
      const path = `/ssrf-${i}.png`
      open.images.route(path, { kind: 'bytes', body: makePng(30 + i, 30) })
      const res = await expectRefused(
        open,
        `https://${host}:${portOf(open)}${path}`,
        /(?:blocked address \(private, loopback or reserved\)|cannot be resolved to an allowed address); the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS \(see \/docs\/errors#invalid_image_url\)$/,
      )
      // The client learns the category; the address and its kind go to the operator log only.
      expect(refusalDetail(open, res)).toMatch(/\((?:loopback|unspecified|IPv4-mapped)\)/)
      expect(open.images.hits(path)).toBe(0)
    })
  }

  test('nothing was charged for any of them', async () => {
    const usage = await open.service.api.get('/api/usage', open.key)
    expect(usage.body.credits.used).toBe(0)
  })
})

describe('SSRF: the allow-list and redirects', () => {
  test('an allow-listed host name is fetched (control)', async () => {
    const url = viaLocalhost(allowed.serve(makePng(61, 40)))
    const res = await generate(allowed, { image_url: url })
    expect(res.status).toBe(200)
    expect(allowed.images.hits(new URL(url).pathname)).toBe(1)
    expect(allowedLookups).toContain('localhost')
  })

  test('the allow-list names the host, not its address: https://127.0.0.1 is still blocked there', async () => {
    const path = '/by-ip.png'
    allowed.images.route(path, { kind: 'bytes', body: makePng(62, 40) })
    await expectRefused(allowed, `${allowed.images.origin}${path}`, /blocked/)
    expect(allowed.images.hits(path)).toBe(0)
  })

  test('a redirect from the allowed host to a blocked address is refused; the first hop was fetched, the target never', async () => {
    const target = '/redirect-target.png'
    allowed.images.route(target, { kind: 'bytes', body: makePng(63, 40) })
    allowed.images.route('/hop', { kind: 'redirect', to: `${allowed.images.origin}${target}`, status: 302 })
    const res = await expectRefused(allowed, `https://localhost:${portOf(allowed)}/hop`, /redirects to/)
    expect(res.body.error.message).toMatch(/blocked/)
    expect(allowed.images.hits('/hop')).toBe(1)
    expect(allowed.images.hits(target)).toBe(0)
  })

  test('a redirect to a name that resolves to loopback is refused too', async () => {
    // loopback.test resolves to 127.0.0.1 like localhost does, but only localhost is allow-listed.
    const target = '/name-target.png'
    allowed.images.route(target, { kind: 'bytes', body: makePng(70, 40) })
    allowed.images.route('/hop-to-name', { kind: 'redirect', to: `https://loopback.test:${portOf(allowed)}${target}`, status: 301 })
    const res = await expectRefused(
      allowed,
      `https://localhost:${portOf(allowed)}/hop-to-name`,
      /redirects to a host that cannot be resolved to an allowed address/,
    )
    expect(res.body.error.message).not.toContain('127.0.0.1')
    expect(refusalDetail(allowed, res)).toMatch(/loopback\.test → 127\.0\.0\.1 \(loopback\)/)
    expect(allowed.images.hits('/hop-to-name')).toBe(1)
    expect(allowed.images.hits(target)).toBe(0)
    expect(allowedLookups).toContain('loopback.test')
  })

  test('a redirect to http:// is refused', async () => {
    allowed.images.route('/hop-to-http', { kind: 'redirect', to: `http://localhost:${portOf(allowed)}/x.png`, status: 307 })
    await expectRefused(allowed, `https://localhost:${portOf(allowed)}/hop-to-http`, /https/)
  })

  test('a URL with a user name and password is refused before any connection', async () => {
    const path = '/with-credentials.png'
    allowed.images.route(path, { kind: 'bytes', body: makePng(64, 40) })
    await expectRefused(allowed, `https://user:s3cret@localhost:${portOf(allowed)}${path}`, /user name or password/)
    await expectRefused(allowed, `https://token@localhost:${portOf(allowed)}${path}`, /user name or password/)
    expect(allowed.images.hits(path)).toBe(0)
  })
})

describe('secrets stay out of the log', () => {
  test('a signed URL token and the image bytes never appear in the service log', async () => {
    const png = makePng(65, 40)
    const url = `${viaLocalhost(allowed.serve(png))}?sig=SECRET123&expires=1999999999`
    const ok = await generate(allowed, { image_url: url })
    expect(ok.status).toBe(200)
    expect(ok.text).not.toContain('SECRET123')

    // Refusals too: a 404, a redirect whose Location carries a token, a page instead of an image.
    const missing = await generate(allowed, { image_url: `https://localhost:${portOf(allowed)}/gone.png?sig=SECRET404` })
    expect(missing.status).toBe(400)
    expect(missing.text).not.toContain('SECRET404')
    allowed.images.route('/hop-secret', { kind: 'redirect', to: `${allowed.images.origin}/x.png?sig=SECRETREDIRECT` })
    const redirected = await generate(allowed, { image_url: `https://localhost:${portOf(allowed)}/hop-secret?sig=SECRETFIRST` })
    expect(redirected.status).toBe(400)
    expect(redirected.text).not.toContain('SECRET')
    const page = new TextEncoder().encode('<html><body>BODYMARKER-7f3a9c session=SECRETCOOKIE</body></html>')
    const html = await generate(allowed, { image_url: `${viaLocalhost(allowed.serve(page, 'image/png'))}?sig=SECRETHTML` })
    expect(html.status).toBe(400)
    expect(html.text).not.toContain('BODYMARKER')

    const log = allowed.service.logText()
    expect(log.length).toBeGreaterThan(0)
    expect(log).not.toContain('SECRET')
    expect(log).not.toContain('BODYMARKER')
    const sourceBase64 = Buffer.from(png).toString('base64')
    const middle = (base64: string) => base64.slice(Math.floor(base64.length / 2) - 24, Math.floor(base64.length / 2) + 24)
    expect(sourceBase64.length).toBeGreaterThan(96)
    expect(log).not.toContain(sourceBase64.slice(0, 48))
    expect(log).not.toContain(middle(sourceBase64))
    const sentToModel = (allowed.ollama.chatRequests()[0]!.messages ?? []).flatMap((m) => m.images ?? [])[0]!
    expect(sentToModel.length).toBeGreaterThan(96)
    expect(log).not.toContain(sentToModel.slice(0, 48))
    expect(log).not.toContain(middle(sentToModel))
  })
})

describe('the model server stays internal', () => {
  const internals = () => [allowed.ollama.url, `127.0.0.1:${allowed.ollama.port}`, `localhost:${allowed.ollama.port}`, '10.9.8.7', '/srv/ollama']

  test('neither a success nor an upstream failure echoes the model server address', async () => {
    const ok = await generate(allowed, { image_url: viaLocalhost(allowed.serve(makePng(66, 40))) })
    expect(ok.status).toBe(200)
    for (const secret of internals()) expect(ok.text).not.toContain(secret)

    allowed.ollama.behave({ failStatus: 503, failError: 'dial tcp 10.9.8.7:11434: connect: connection refused (/srv/ollama/runner)' })
    const failed = await generate(allowed, { image_url: viaLocalhost(allowed.serve(makePng(67, 40))) })
    expect(failed.status).toBe(502)
    expect(failed.body.error.code).toBe('upstream_error')
    for (const secret of internals()) expect(failed.text).not.toContain(secret)

    allowed.ollama.behave({ failStatus: null, models: ['moondream:latest'] })
    const missing = await generate(allowed, { image_url: viaLocalhost(allowed.serve(makePng(68, 40))) })
    expect(missing.status).toBe(502)
    for (const secret of internals()) expect(missing.text).not.toContain(secret)
    for (const header of missing.headers.values()) for (const secret of internals()) expect(header).not.toContain(secret)
  })
})

describe('accounts are isolated', () => {
  test("another account's key gets no data of this account from alt-text results", async () => {
    const { apiKey: ownerKey, email: ownerEmail, prefix: ownerPrefix } = await allowed.service.api.register()
    const other = await allowed.service.api.register()
    const url = viaLocalhost(allowed.serve(makePng(69, 40)))
    const options = { image_url: url, context: 'Internal quarterly review of ACME', keywords: ['acme'] }

    const mine = await generate(allowed, options, ownerKey)
    expect(mine.status).toBe(200)
    expect(mine.body.cached).toBe(false)
    expect(mine.body.credits_remaining).toBe(49)

    // The other account asking the very same thing gets its own answer (the cache is per account), its own
    // balance and nothing of the owner.
    const theirs = await generate(allowed, options, other.apiKey)
    expect(theirs.status).toBe(200)
    expect(theirs.body.cached).toBe(false)
    expect(theirs.body.credits_remaining).toBe(49)
    expect(Object.keys(theirs.body).sort()).toEqual(
      [
        'alt_text',
        'animated',
        'cached',
        'character_count',
        'credits_remaining',
        'decorative',
        'decorative_reason',
        'image',
        'language',
        'length',
        'model',
        'processing_time_ms',
        'source',
        'text_in_image',
        'wcag_compliant',
        'wcag_issues',
      ].sort(),
    )
    for (const text of [mine.text, theirs.text]) {
      expect(text).not.toContain(ownerEmail)
      expect(text).not.toContain(ownerPrefix)
      expect(text).not.toContain(ownerKey)
      expect(text).not.toContain(other.email)
      expect(text).not.toContain(other.prefix)
      expect(text).not.toContain('account')
    }

    // Balances stay apart.
    expect((await allowed.service.api.get('/api/usage', ownerKey)).body.credits.used).toBe(1)
    expect((await allowed.service.api.get('/api/usage', other.apiKey)).body.credits.used).toBe(1)
    // The other key lists only its own keys.
    const keys = await allowed.service.api.get('/api/keys', other.apiKey)
    expect(keys.status).toBe(200)
    expect(keys.text).not.toContain(ownerPrefix)
  })
})
