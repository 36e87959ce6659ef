// The real service speaking to the fake OpenAI-compatible server (ALTTEXT_MODEL_API=openai), with a local
// HTTPS image server for the images. Loopback only.
import type { Overrides } from '../../src/app'
import { startFakeOpenAi, type Behaviour, type FakeOpenAi } from '../support/fake-openai'
import { startHttpsImageServer, type HttpsImageServer } from '../support/https-image-server'
import { startServiceOnModel } from '../support/alt-text-env'
import type { ApiResponse, TestService } from '../support/service'

export type OpenAiEnv = {
  service: TestService
  model: FakeOpenAi
  images: HttpsImageServer
  key: string
  serve(bytes: Uint8Array, contentType?: string): string
  generate(body: Record<string, unknown>, key?: string): Promise<ApiResponse>
  /** Credits used by the env's account this period. */
  creditsUsed(): Promise<number>
  stop(): Promise<void>
}

let served = 0

export async function startOpenAiEnv(options: { env?: Record<string, string>; overrides?: Overrides; model?: Partial<Behaviour> } = {}): Promise<OpenAiEnv> {
  const model = await startFakeOpenAi(options.model)
  const images = await startHttpsImageServer()
  const { service, apiKey } = await startServiceOnModel(model.url, images, { ...options, api: 'openai' })
  return {
    service,
    model,
    images,
    key: apiKey,
    serve: (bytes, contentType) => images.route(`/img-${process.pid}-${++served}`, { kind: 'bytes', body: bytes, contentType }),
    generate: (body, key = apiKey) => service.api.post('/api/alt-text', body, key),
    creditsUsed: async () => (await service.api.get('/api/usage', apiKey)).body.credits.used,
    async stop() {
      await service.stop()
      await Promise.all([model.stop(), images.stop()])
    },
  }
}
