// The image formats against both model backends: the real service with the fake Ollama or the fake
// OpenAI-compatible server, and what each was sent.
import { startOpenAiEnv } from '../model-backends/openai-env'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import type { ApiResponse, TestService } from '../support/service'

/** What a format test needs of either backend. */
export type FormatEnv = {
  name: string
  service: TestService
  key: string
  serve(bytes: Uint8Array, contentType?: string): string
  generate(body: Record<string, unknown>, key?: string): Promise<ApiResponse>
  /** POST /api/alt-text as multipart/form-data with the file in `image`. */
  upload(bytes: Uint8Array, fields?: Record<string, string>): Promise<ApiResponse>
  /** The images the fake model was sent since reset(), as it sniffed them. */
  images(): { format: string; bytes: Uint8Array }[]
  /** The text of every prompt (system and user) since reset(). */
  prompts(): string
  reset(): void
  creditsUsed(): Promise<number>
  stop(): Promise<void>
}

async function answer(response: Response): Promise<ApiResponse> {
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: kept as text
  }
  return { status: response.status, headers: response.headers, body, text }
}

function uploader(service: TestService, key: string) {
  return async (bytes: Uint8Array, fields: Record<string, string> = {}): Promise<ApiResponse> => {
    const form = new FormData()
    for (const [name, value] of Object.entries(fields)) form.append(name, value)
    form.append('image', new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }), 'image')
    return answer(await fetch(`${service.url}/api/alt-text`, { method: 'POST', headers: { 'x-api-key': key }, body: form }))
  }
}

export async function startFormatEnvs(): Promise<FormatEnv[]> {
  const [ollama, openai]: [AltTextEnv, Awaited<ReturnType<typeof startOpenAiEnv>>] = await Promise.all([startAltTextEnv(), startOpenAiEnv()])
  const used = async (service: TestService, key: string) => (await service.api.get('/api/usage', key)).body.credits.used as number
  return [
    {
      name: 'Ollama',
      service: ollama.service,
      key: ollama.key,
      serve: (bytes, type) => ollama.serve(bytes, type),
      generate: (body, key) => ollama.generate(body, key),
      upload: uploader(ollama.service, ollama.key),
      images: () => ollama.ollama.requests.flatMap((request) => request.images),
      prompts: () => JSON.stringify(ollama.ollama.chatRequests().map((chat) => chat.messages)),
      reset: () => ollama.ollama.reset(),
      creditsUsed: () => used(ollama.service, ollama.key),
      stop: () => ollama.stop(),
    },
    {
      name: 'OpenAI-compatible',
      service: openai.service,
      key: openai.key,
      serve: (bytes, type) => openai.serve(bytes, type),
      generate: (body, key) => openai.generate(body, key),
      upload: uploader(openai.service, openai.key),
      images: () => openai.model.requests.flatMap((request) => request.images),
      prompts: () => JSON.stringify(openai.model.chatRequests().map((chat) => chat.messages)),
      reset: () => openai.model.reset(),
      creditsUsed: () => openai.creditsUsed(),
      stop: () => openai.stop(),
    },
  ]
}

export const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64')
export const utf8 = (text: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(text)
