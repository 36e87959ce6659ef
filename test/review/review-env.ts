// POST /api/alt-text/review against either model backend: the real service, a real HTTPS image server
// and the fake Ollama or OpenAI-compatible server, told which verdict to give. Loopback only.
import type { Overrides } from '../../src/app'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai'
import { startHttpsImageServer, type HttpsImageServer } from '../support/https-image-server'
import { startServiceOnModel } from '../support/alt-text-env'
import type { ApiResponse, TestService } from '../support/service'
import { plainVerdict, type VerdictFields } from '../support/verdict-reply'

export type Backend = 'ollama' | 'openai'
export const BACKENDS: Backend[] = ['ollama', 'openai']

export type ReviewEnv = {
  backend: Backend
  service: TestService
  images: HttpsImageServer
  key: string
  serve(bytes: Uint8Array, contentType?: string): string
  review(body: Record<string, unknown>, key?: string): Promise<ApiResponse>
  /** The verdict of the answers from now on: structured (the schema's JSON) or, with `plain`, three labelled lines. */
  answer(fields: VerdictFields, plain?: boolean): void
  /** A raw answer, as the model server sends it whatever the format asked. */
  answerRaw(text: string): void
  /** The model server answers 500 from now on. */
  fail(): void
  /** The model server never answers from now on (until reset). */
  hang(): void
  /** The model server answers `head` and then `unit` repeated to about `bytes`, whatever the token limit (a hostile host). */
  answerHuge(bytes: number, head: string, unit: string): void
  /** Requests held by hang() answer `status` now (the model server failing late). */
  failHeld(status: number): void
  /** The model server takes `ms` for each answer from now on (until reset). */
  slow(ms: number): void
  /** Bytes of huge answers the model server has handed to the socket since the last reset. */
  modelBytesStreamed(): number
  /** Chat requests the model server received since the last reset. */
  modelCalls(): Record<string, unknown>[]
  creditsUsed(key?: string): Promise<number>
  reset(): void
  stop(): Promise<void>
}

let served = 0

export async function startReviewEnv(backend: Backend, options: { env?: Record<string, string>; overrides?: Overrides } = {}): Promise<ReviewEnv> {
  const ollama: FakeOllama | null = backend === 'ollama' ? await startFakeOllama() : null
  const openai: FakeOpenAi | null = backend === 'openai' ? await startFakeOpenAi() : null
  const images = await startHttpsImageServer()
  const { service, apiKey } = await startServiceOnModel((ollama ?? openai)!.url, images, { ...options, ...(openai ? { api: 'openai' as const } : {}) })
  return {
    backend,
    service,
    images,
    key: apiKey,
    serve: (bytes, contentType) => images.route(`/review-${process.pid}-${++served}`, { kind: 'bytes', body: bytes, contentType }),
    review: (body, key = apiKey) => service.api.post('/api/alt-text/review', body, key),
    answer(fields, plain = false) {
      if (plain) {
        ollama?.behave({ formatSupport: 'ignore', reply: plainVerdict(fields), structured: null })
        openai?.behave({ responseFormat: 'ignore', reply: plainVerdict(fields), structured: null })
      } else {
        ollama?.behave({ formatSupport: 'schema', structured: fields })
        openai?.behave({ responseFormat: 'schema', structured: fields })
      }
    },
    answerRaw(text) {
      ollama?.behave({ formatSupport: 'ignore', reply: text, structured: null })
      openai?.behave({ responseFormat: 'ignore', reply: text, structured: null })
    },
    fail() {
      ollama?.behave({ failStatus: 500 })
      openai?.behave({ failStatus: 500 })
    },
    hang() {
      ollama?.behave({ hang: true })
      openai?.behave({ hang: true })
    },
    answerHuge(bytes, head, unit) {
      ollama?.behave({ hugeReply: { bytes, streamed: false, head, unit } })
      openai?.behave({ hugeReply: { bytes, streamed: false, head, unit } })
    },
    failHeld(status) {
      ollama?.release({ status, message: 'llama runner process has terminated' })
      openai?.release({ status, message: 'the model server failed' })
    },
    slow(ms) {
      ollama?.behave({ delayMs: ms })
      openai?.behave({ delayMs: ms })
    },
    modelBytesStreamed: () => (ollama ? ollama.bytesStreamed() : openai!.bytesStreamed()),
    modelCalls: () => (ollama ? (ollama.chatRequests() as Record<string, unknown>[]) : openai!.chatRequests()),
    creditsUsed: async (key = apiKey) => (await service.api.get('/api/usage', key)).body.credits.used,
    reset() {
      ollama?.reset()
      openai?.reset()
    },
    async stop() {
      await service.stop()
      await Promise.all([ollama?.stop(), openai?.stop(), images.stop()])
    },
  }
}
