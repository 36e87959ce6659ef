// The real service with a pool of fake Ollama hosts (ALTTEXT_MODEL_HOSTS) and a local HTTPS image server.
// Loopback only. A host given as 'stopped' is started and stopped at once: its port refuses connections.
import { startFakeOllama, type Behaviour, type FakeOllama } from '../support/fake-ollama'
import { startHttpsImageServer, type HttpsImageServer } from '../support/https-image-server'
import { makePng } from '../support/images'
import { startTestService, type ApiResponse, type TestService } from '../support/service'

export type PoolEnv = {
  service: TestService
  hosts: FakeOllama[]
  images: HttpsImageServer
  key: string
  /** POST /api/alt-text with a fresh image (never cached). */
  generate(): Promise<ApiResponse>
  creditsUsed(): Promise<number>
  /** Chat calls each host received. */
  chats(): number[]
  stop(): Promise<void>
}

let size = 20

export async function startPoolEnv(hosts: (Partial<Behaviour> | 'stopped')[], env: Record<string, string> = {}): Promise<PoolEnv> {
  const fakes = await Promise.all(hosts.map((h) => startFakeOllama({ reply: 'A red kite over a beach.', ...(h === 'stopped' ? {} : h) })))
  await Promise.all(fakes.map((fake, i) => (hosts[i] === 'stopped' ? fake.stop() : null)))
  const images = await startHttpsImageServer()
  const service = await startTestService({
    env: {
      ALTTEXT_MODEL_HOSTS: fakes.map((f) => f.url).join(','),
      ALTTEXT_MODEL: 'llava',
      ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
      NODE_EXTRA_CA_CERTS: images.caPath,
      ALTTEXT_RATE_LIMITS: 'off',
      ...env,
    },
    overrides: { modelHostBackoff: { initialMs: 100, maxMs: 400 } },
  })
  const { apiKey } = await service.api.register()
  let served = 0
  return {
    service,
    hosts: fakes,
    images,
    key: apiKey,
    generate: () => {
      const url = images.route(`/pool-${process.pid}-${++served}`, { kind: 'bytes', body: makePng(++size, 30) })
      return service.api.post('/api/alt-text', { image_url: url }, apiKey)
    },
    creditsUsed: async () => (await service.api.get('/api/usage', apiKey)).body.credits.used,
    chats: () => fakes.map((f) => f.chatRequests().length),
    async stop() {
      await service.stop()
      await Promise.all([...fakes.map((f) => f.stop()), images.stop()])
    },
  }
}
