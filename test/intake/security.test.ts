// SSRF defences against a real local HTTPS origin. Every request here goes to loopback only;
// refusals are asserted together with the server's hit count, to prove nothing was sent.
// Private and public ranges beyond loopback are covered by classifier.test.ts as pure
// functions and are never contacted: where a resolver answers with such an address, the
// fetch must refuse before connecting.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createImageIntake, MAX_URL_LENGTH } from '../../src/intake/index.ts'
import { startHttpsImageServer, type HttpsImageServer } from '../support/https-image-server.ts'
import { makePng } from '../support/images.ts'
import { expectRefusal, fakeResolver } from './fixtures.ts'

let server: HttpsImageServer
let port: string

beforeAll(async () => {
  server = await startHttpsImageServer()
  port = new URL(server.origin).port
})
afterAll(async () => {
  await server.stop()
})

const noDeadline = (): AbortSignal => new AbortController().signal

/** No allow-list: loopback is as blocked as it is in production. */
function strictIntake(extra: Partial<Parameters<typeof createImageIntake>[0]> = {}) {
  return createImageIntake({
    allowPrivateHosts: [],
    extraCaPem: server.caPem,
    resolve: fakeResolver({ localhost: ['127.0.0.1', '::1'] }),
    ...extra,
  })
}

describe('loopback is refused unless allow-listed, and never contacted', () => {
  const path = '/security/secret.png'
  beforeAll(() => {
    server.route(path, { kind: 'bytes', body: makePng(8, 8) })
  })

  // The client learns the category only; the address and its kind go to the operator log (detail).
  const literal =
    /^the image host is a blocked address \(private, loopback or reserved\); the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS \(see \/docs\/errors#invalid_image_url\)$/
  const named =
    /^the image host localhost cannot be resolved to an allowed address; the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS \(see \/docs\/errors#invalid_image_url\)$/
  test.each([
    ['127.0.0.1', literal, /^127\.0\.0\.1 → 127\.0\.0\.1 \(loopback\)$/],
    ['localhost', named, /^localhost → 127\.0\.0\.1 \(loopback\)$/],
    ['LOCALHOST', named, /^localhost → 127\.0\.0\.1 \(loopback\)$/],
    ['127.1', literal, /→ 127\.0\.0\.1 \(loopback\)/],
    ['2130706433', literal, /→ 127\.0\.0\.1 \(loopback\)/],
    ['0x7f000001', literal, /→ 127\.0\.0\.1 \(loopback\)/],
    ['0177.0.0.1', literal, /→ 127\.0\.0\.1 \(loopback\)/],
    ['127.0.0.1.', literal, /→ 127\.0\.0\.1 \(loopback\)/],
    ['[::1]', literal, /^::1 → ::1 \(loopback\)$/],
    ['[::ffff:127.0.0.1]', literal, /→ ::ffff:7f00:1 \(IPv4-mapped\)$/],
    ['[::127.0.0.1]', literal, /\(IPv4-compatible\)$/],
    ['0', literal, /→ 0\.0\.0\.0 \(unspecified\)$/],
  ])('https://%s:PORT/ is refused', async (host, message, detail) => {
    await expectRefusal(strictIntake().fetch(`https://${host}:${port}${path}`, noDeadline()), message, detail)
    expect(server.hits(path)).toBe(0)
  })

  test('an allow-list for another address does not open loopback', async () => {
    const intake = strictIntake({ allowPrivateHosts: ['10.0.0.0/8', 'images.intranet', '::2'] })
    await expectRefusal(intake.fetch(`https://127.0.0.1:${port}${path}`, noDeadline()), /blocked address/, /\(loopback\)/)
    expect(server.hits(path)).toBe(0)
  })
})

describe('every resolved address must pass', () => {
  test('one public and one private answer: refused without connecting', async () => {
    const resolver = fakeResolver({ 'mixed.test': ['93.184.216.34', '10.0.0.5'] })
    const refusal = await expectRefusal(
      strictIntake({ resolve: resolver }).fetch('https://mixed.test/x.png', noDeadline()),
      /^the image host mixed.test cannot be resolved to an allowed address; the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS \(see \/docs\/errors#invalid_image_url\)$/,
      /^mixed\.test → 10\.0\.0\.5 \(private\)$/,
    )
    expect(refusal.message).not.toContain('10.0.0.5')
    expect(resolver.calls).toEqual(['mixed.test'])
  })

  test('a private answer listed first is refused the same way', async () => {
    const resolver = fakeResolver({ 'mixed.test': ['fd00::1', '2606:4700::1111'] })
    await expectRefusal(
      strictIntake({ resolve: resolver }).fetch('https://mixed.test/x.png', noDeadline()),
      /cannot be resolved to an allowed address; the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS \(see \/docs\/errors#invalid_image_url\)$/,
      /fd00::1 \(unique local \(private\)\)/,
    )
  })

  test.each([
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'shared \\(CGNAT\\)'],
    ['::ffff:10.0.0.1', 'IPv4-mapped'],
    ['64:ff9b::a00:1', 'NAT64'],
    ['2002:a00:1::1', '6to4'],
    ['2001:0:a00:1::1', 'Teredo'],
    ['0.0.0.0', 'unspecified'],
  ])('a name resolving to %s is refused', async (address, kind) => {
    const resolver = fakeResolver({ 'sneaky.test': [address] })
    const refusal = await expectRefusal(
      strictIntake({ resolve: resolver }).fetch('https://sneaky.test/x.png', noDeadline()),
      /^the image host sneaky\.test cannot be resolved to an allowed address; the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS \(see \/docs\/errors#invalid_image_url\)$/,
      new RegExp(`→ ${address.replaceAll('.', '\\.')} \\(${kind}\\)$`),
    )
    expect(refusal.message).not.toContain(address)
  })

  test('the resolver is asked once per hop, and a changed answer later is never used (DNS rebinding)', async () => {
    const path = '/security/rebind.png'
    server.route(path, { kind: 'bytes', body: makePng(8, 8) })
    // First answer allowed; any later answer points at 127.0.0.2, where nothing listens (and
    // which is not allow-listed), so a second lookup would make the fetch fail.
    const resolver = fakeResolver({ localhost: [['127.0.0.1'], ['127.0.0.2']] })
    const intake = strictIntake({ resolve: resolver, allowPrivateHosts: ['127.0.0.1'] })
    const image = await intake.fetch(`https://localhost:${port}${path}`, noDeadline())
    expect(image.format).toBe('png')
    expect(resolver.calls).toEqual(['localhost'])
  })
})

describe('redirects are checked hop by hop', () => {
  test('a redirect to a blocked address is refused after the allowed first hop was fetched', async () => {
    server.route('/security/redirect-target.png', { kind: 'bytes', body: makePng(8, 8) })
    // The first hop is allowed by its host name only; the target is the bare IP.
    const first = server.route('/security/to-loopback', { kind: 'redirect', to: `https://127.0.0.1:${port}/security/redirect-target.png` })
    const intake = strictIntake({ allowPrivateHosts: ['localhost'] })
    await expectRefusal(
      intake.fetch(first.replace('127.0.0.1', 'localhost'), noDeadline()),
      /^the image URL redirects to a blocked address \(private, loopback or reserved\); the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS \(see \/docs\/errors#invalid_image_url\)$/,
      /→ 127\.0\.0\.1 \(loopback\)$/,
    )
    expect(server.hits('/security/to-loopback')).toBe(1)
    expect(server.hits('/security/redirect-target.png')).toBe(0)
  })

  test('a redirect to a name that resolves to a blocked address is refused', async () => {
    const first = server.route('/security/to-internal-name', { kind: 'redirect', to: 'https://internal.test/secret.png' })
    const resolver = fakeResolver({ localhost: ['127.0.0.1'], 'internal.test': ['192.168.1.10'] })
    const intake = strictIntake({ allowPrivateHosts: ['localhost'], resolve: resolver })
    await expectRefusal(
      intake.fetch(first.replace('127.0.0.1', 'localhost'), noDeadline()),
      /^the image URL redirects to a host that cannot be resolved to an allowed address; the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS \(see \/docs\/errors#invalid_image_url\)$/,
      /^internal\.test → 192\.168\.1\.10 \(private\)$/,
    )
    expect(resolver.calls).toEqual(['localhost', 'internal.test'])
  })

  test.each([
    ['http', `http://127.0.0.1:${'{port}'}/x.png`, /redirects to a http URL/],
    ['ftp', 'ftp://127.0.0.1/x.png', /redirects to a ftp URL/],
    ['file', 'file:///etc/passwd', /redirects to a file URL/],
    ['data', 'data:image/png;base64,iVBORw0KGgo=', /redirects to a data URL/],
    ['credentials', 'https://user:secret@localhost/x.png', /user name or password/],
  ])('a redirect to a %s URL is refused', async (name, target, message) => {
    const path = `/security/redirect-${name}`
    const url = server.route(path, { kind: 'redirect', to: target.replace('{port}', port) })
    await expectRefusal(strictIntake({ allowPrivateHosts: ['127.0.0.1'] }).fetch(url, noDeadline()), message)
    expect(server.hits(path)).toBe(1)
  })

  test('6 redirects are refused; the target is never requested', async () => {
    server.route('/security/six/target.png', { kind: 'bytes', body: makePng(8, 8) })
    for (let hop = 1; hop <= 6; hop++) {
      server.route(`/security/six/${hop}`, { kind: 'redirect', to: hop === 6 ? 'target.png' : `${hop + 1}` })
    }
    const intake = strictIntake({ allowPrivateHosts: ['127.0.0.1'] })
    await expectRefusal(intake.fetch(server.url('/security/six/1'), noDeadline()), /^too many redirects \(over 5\)$/)
    for (let hop = 1; hop <= 6; hop++) expect(server.hits(`/security/six/${hop}`)).toBe(1)
    expect(server.hits('/security/six/target.png')).toBe(0)
  })

  test('a redirect loop ends at the limit', async () => {
    const url = server.route('/security/loop', { kind: 'redirect', to: '/security/loop' })
    await expectRefusal(strictIntake({ allowPrivateHosts: ['127.0.0.1'] }).fetch(url, noDeadline()), /too many redirects/)
    expect(server.hits('/security/loop')).toBe(6)
  })

  test('maxRedirects: 0 refuses the first redirect', async () => {
    server.route('/security/zero/target.png', { kind: 'bytes', body: makePng(8, 8) })
    const url = server.route('/security/zero/start', { kind: 'redirect', to: 'target.png' })
    await expectRefusal(strictIntake({ allowPrivateHosts: ['127.0.0.1'], maxRedirects: 0 }).fetch(url, noDeadline()), /too many redirects \(over 0\)/)
  })
})

describe('the URL itself', () => {
  test.each([
    ['http://127.0.0.1/x.png', /^the image URL must use https \(found http\)$/],
    ['HTTP://example.com/x.png', /found http\)/],
    ['ftp://example.com/x.png', /found ftp\)/],
    ['file:///etc/passwd', /found file\)/],
    ['data:image/png;base64,iVBORw0KGgo=', /found data\)/],
    ['javascript:alert(1)', /found javascript\)/],
    ['gopher://127.0.0.1:6379/_INFO', /found gopher\)/],
    ['ws://example.com/', /found ws\)/],
    ['//example.com/x.png', /not a valid absolute URL/],
    ['/x.png', /not a valid absolute URL/],
    ['', /not a valid absolute URL/],
    ['https://', /not a valid absolute URL/],
    ['https://user:pass@example.com/x.png', /user name or password/],
    ['https://user@example.com/x.png', /user name or password/],
    ['https://:pass@example.com/x.png', /user name or password/],
  ])('%p is refused', async (url, message) => {
    const resolver = fakeResolver({})
    await expectRefusal(strictIntake({ resolve: resolver }).fetch(url, noDeadline()), message)
    expect(resolver.calls).toEqual([])
  })

  test('an over-long URL is refused before anything else', async () => {
    const url = `https://example.com/${'a'.repeat(MAX_URL_LENGTH)}`
    await expectRefusal(strictIntake().fetch(url, noDeadline()), new RegExp(`longer than ${MAX_URL_LENGTH} characters`))
  })
})

describe('TLS', () => {
  test('without the extra CA the self-signed certificate is not trusted', async () => {
    const path = '/security/untrusted.png'
    const url = server.route(path, { kind: 'bytes', body: makePng(8, 8) })
    const intake = createImageIntake({ allowPrivateHosts: ['127.0.0.1'], resolve: fakeResolver({}) })
    await expectRefusal(intake.fetch(url, noDeadline()), /^the image host could not be reached$/, /TLS certificate not accepted/)
    expect(server.hits(path)).toBe(0)
  })
})
