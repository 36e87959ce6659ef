// Everything an alt-text test needs: the real service, the fake Ollama, and a real local HTTPS image
// server whose self-signed certificate the service trusts through NODE_EXTRA_CA_CERTS.
import type { Overrides } from '../../src/app'
import { startFakeOllama, type Behaviour, type FakeOllama } from './fake-ollama'
import { startHttpsImageServer, type HttpsImageServer } from './https-image-server'
import { startTestService, type ApiResponse, type TestService } from './service'

export type AltTextEnv = {
  service: TestService
  ollama: FakeOllama
  images: HttpsImageServer
  /** A fresh account's key. */
  key: string
  /** Serves `bytes` at a new path and returns its https URL. */
  serve(bytes: Uint8Array, contentType?: string): string
  /** POST /api/alt-text with `key` (default: the env's key). */
  generate(body: Record<string, unknown>, key?: string): Promise<ApiResponse>
  stop(): Promise<void>
}

let served = 0

/**
 * The real service on a fake model server (Ollama's API, or `api: 'openai'`), trusting the local HTTPS
 * image server, rate limits off, with one registered account.
 */
export async function startServiceOnModel(
  modelUrl: string,
  images: HttpsImageServer,
  options: { api?: 'openai'; env?: Record<string, string>; overrides?: Overrides } = {},
): Promise<{ service: TestService; apiKey: string }> {
  const service = await startTestService({
    env: {
      OLLAMA_HOST: modelUrl,
      ...(options.api ? { ALTTEXT_MODEL_API: options.api } : {}),
      ALTTEXT_MODEL: 'llava',
      ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
      NODE_EXTRA_CA_CERTS: images.caPath,
      ALTTEXT_RATE_LIMITS: 'off',
      ...options.env,
    },
    overrides: options.overrides,
  })
  const { apiKey } = await service.api.register()
  return { service, apiKey }
}

export async function startAltTextEnv(options: { env?: Record<string, string>; overrides?: Overrides; ollama?: Partial<Behaviour> } = {}): Promise<AltTextEnv> {
  const ollama = await startFakeOllama({ reply: 'Two children flying a red kite on a windy beach.', ...options.ollama })
  const images = await startHttpsImageServer()
  const { service, apiKey } = await startServiceOnModel(ollama.url, images, options)
  return {
    service,
    ollama,
    images,
    key: apiKey,
    serve(bytes, contentType) {
      return images.route(`/img-${process.pid}-${++served}`, { kind: 'bytes', body: bytes, contentType })
    },
    generate: (body, key = apiKey) => service.api.post('/api/alt-text', body, key),
    async stop() {
      await service.stop()
      await Promise.all([ollama.stop(), images.stop()])
    },
  }
}
