// What a client learns when the image host fails, over HTTP against the real service: the category
// only (cannot be resolved to an allowed address, could not be reached), never what a name resolves to,
// which kind of address it is, or whether a port is open, closed, silent or not speaking TLS. The
// details go to the operator log. Every connection here goes to loopback; the private address is
// only ever resolved (by a fake resolver) and refused before connecting.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createServer, type Server, type Socket } from 'node:net'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env.ts'
import { makePng } from '../support/images.ts'
import { fakeResolver } from './fixtures.ts'

let env: AltTextEnv
const servers: Server[] = []
const sockets = new Set<Socket>()

/** A TCP listener on loopback that does `onConnection` with each connection; its port. */
async function listen(onConnection: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    onConnection(socket)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push(server)
  return (server.address() as { port: number }).port
}

let ports: { closed: number; silent: number; plain: number; tls: number }

beforeAll(async () => {
  // A closed port that stays closed while other test files run beside this one: we hold the port on
  // 127.0.0.1 (so no one can listen on it anywhere, wildcard included) and connect to 127.0.0.2, where
  // nothing listens. A port merely freed could be taken by another file's server.
  const closed = await listen(() => {})
  const silent = await listen(() => {}) // accepts, never answers the TLS hello
  const plain = await listen((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n')) // open, but not TLS
  env = await startAltTextEnv({
    overrides: {
      resolveHost: fakeResolver({
        'internal.test': ['10.0.0.5'],
        'mixed.test': ['127.0.0.1', '10.0.0.5'],
        'closed.test': ['127.0.0.2'],
        'silent.test': ['127.0.0.1'],
        'plain.test': ['127.0.0.1'],
        'wrong-name.test': ['127.0.0.1'],
        localhost: ['127.0.0.1'],
      }),
      intakeOptions: { connectTimeoutMs: 300 },
    },
    env: { ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1,127.0.0.2' },
  })
  ports = { closed, silent, plain, tls: Number(new URL(env.images.origin).port) }
})

afterAll(async () => {
  await env.stop()
  for (const socket of sockets) socket.destroy()
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))))
})

/** Refused with 400 invalid_image_url and exactly `message`; the body names no address, port or cause. */
async function expectCategory(imageUrl: string, message: string): Promise<void> {
  const res = await env.generate({ image_url: imageUrl })
  expect(res.status).toBe(400)
  expect(res.body.error.code).toBe('invalid_image_url')
  expect(res.body.error.message).toBe(message)
  for (const secret of ['10.0.0.5', '127.0.0.1', 'private', 'loopback', 'TLS', 'certificate', 'refused', 'timeout', ' ms']) {
    expect(res.text).not.toContain(secret)
  }
  for (const port of Object.values(ports)) expect(res.text).not.toContain(String(port))
}

/** The operator log's details of refusals since `from`. */
const detailsSince = (from: number): string =>
  env.service.logs
    .slice(from)
    .map((line) => String(line.detail ?? ''))
    .join('\n')

describe('the client learns the category only', () => {
  test('a name that cannot be resolved and one that resolves to a blocked address (alone or among others) read the same; the log tells them apart', async () => {
    const from = env.service.logs.length
    const refused = (host: string) =>
      `the image host ${host} cannot be resolved to an allowed address; the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS (see /docs/errors#invalid_image_url)`
    await expectCategory('https://nowhere.test/x.png', refused('nowhere.test'))
    await expectCategory('https://internal.test/x.png', refused('internal.test'))
    await expectCategory('https://mixed.test/x.png', refused('mixed.test'))
    const details = detailsSince(from)
    expect(details).toContain('nowhere.test: ENOTFOUND')
    expect(details).toContain('internal.test → 10.0.0.5 (private)')
  })

  test('a redirect to a name that does not resolve, or resolves to a blocked address, reads the same', async () => {
    const toInternal = env.images.route('/disclosure/to-internal', { kind: 'redirect', to: 'https://internal.test/secret.png' })
    const toNowhere = env.images.route('/disclosure/to-nowhere', { kind: 'redirect', to: 'https://nowhere.test/secret.png' })
    const refused = `the image URL redirects to a host that cannot be resolved to an allowed address; the service's operator can allow such hosts with ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS (see /docs/errors#invalid_image_url)`
    await expectCategory(toInternal, refused)
    await expectCategory(toNowhere, refused)
  })

  test('refused, silent, not TLS, or TLS for another name: all four read the same; the log tells them apart', async () => {
    env.images.route('/disclosure/x.png', { kind: 'bytes', body: makePng(8, 8) })
    const from = env.service.logs.length
    const unreachable = 'the image host could not be reached'
    await expectCategory(`https://closed.test:${ports.closed}/x.png`, unreachable)
    await expectCategory(`https://silent.test:${ports.silent}/x.png`, unreachable)
    await expectCategory(`https://plain.test:${ports.plain}/x.png`, unreachable)
    await expectCategory(`https://wrong-name.test:${ports.tls}/disclosure/x.png`, unreachable)
    const details = detailsSince(from)
    expect(details).toContain('connection refused')
    expect(details).toContain('within 300 ms')
    expect(details).toContain('TLS certificate not accepted')
    // The same host and port under its own name is fetched: only the name made the difference.
    expect((await env.generate({ image_url: `https://localhost:${ports.tls}/disclosure/x.png` })).status).toBe(200)
  })
})
