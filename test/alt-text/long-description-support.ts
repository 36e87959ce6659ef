// Long descriptions against both model backends: the real service with the fake Ollama or the fake
// OpenAI-compatible server, asked structured (the fakes follow the schema) or in plain text (the
// server refuses structured answers, so the marker format is read).
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import type { ApiResponse, TestService } from '../support/service'
import { startOpenAiEnv } from '../model-backends/openai-env'

export type Mode = 'structured' | 'plain'

/** What a long-description test needs of either backend. */
export type LongEnv = {
  name: string
  service: TestService
  key: string
  serve(bytes: Uint8Array): string
  generate(body: Record<string, unknown>, key?: string): Promise<ApiResponse>
  /** Sets the fake model's answer: its alt text, whether images are complex, its long description (default the fakes'), structured or plain. */
  model(answer: { reply?: string; complex: boolean; longDescription?: string; mode: Mode }): void
  /** The model answers in plain text: `head`, then `unit` repeated to about `bytes`, whatever the token limit (a hostile host). */
  hugeAnswer(bytes: number, head: string, unit: string): void
  /** Bytes of huge answers the fake has handed to the socket since the last model() or hugeAnswer() call. */
  modelBytesStreamed(): number
  /** The text of every prompt (system and user) the fake got since the last model() call. */
  prompts(): string
  creditsUsed(): Promise<number>
  stop(): Promise<void>
  /** The Ollama env itself (for multipart uploads); absent for the other backend. */
  ollama?: AltTextEnv
}

export async function startLongEnvs(): Promise<LongEnv[]> {
  const [ollama, openai] = await Promise.all([startAltTextEnv(), startOpenAiEnv()])
  const reply = 'A bar chart of monthly sales that roughly doubled from January to June 2024.'
  const used = async (key: string, get: (path: string, key: string) => Promise<ApiResponse>) => (await get('/api/usage', key)).body.credits.used as number
  return [
    {
      name: 'Ollama',
      service: ollama.service,
      ollama,
      key: ollama.key,
      serve: (bytes) => ollama.serve(bytes),
      generate: (body, key) => ollama.generate(body, key),
      model(answer) {
        ollama.ollama.reset()
        ollama.ollama.behave({
          reply: answer.reply ?? reply,
          complex: () => answer.complex,
          formatSupport: answer.mode === 'structured' ? 'schema' : 'refuse',
          ...(answer.longDescription !== undefined && { longDescription: answer.longDescription }),
        })
      },
      hugeAnswer(bytes, head, unit) {
        ollama.ollama.reset()
        ollama.ollama.behave({ formatSupport: 'refuse', hugeReply: { bytes, streamed: false, head, unit } })
      },
      modelBytesStreamed: () => ollama.ollama.bytesStreamed(),
      prompts: () => JSON.stringify(ollama.ollama.chatRequests().map((chat) => chat.messages)),
      creditsUsed: () => used(ollama.key, (path, key) => ollama.service.api.get(path, key)),
      stop: () => ollama.stop(),
    },
    {
      name: 'OpenAI-compatible',
      service: openai.service,
      key: openai.key,
      serve: (bytes) => openai.serve(bytes),
      generate: (body, key) => openai.generate(body, key),
      model(answer) {
        openai.model.reset()
        openai.model.behave({
          reply: answer.reply ?? reply,
          complex: () => answer.complex,
          responseFormat: answer.mode === 'structured' ? 'schema' : 'refuse',
          ...(answer.longDescription !== undefined && { longDescription: answer.longDescription }),
        })
      },
      hugeAnswer(bytes, head, unit) {
        openai.model.reset()
        openai.model.behave({ responseFormat: 'refuse', hugeReply: { bytes, streamed: false, head, unit } })
      },
      modelBytesStreamed: () => openai.model.bytesStreamed(),
      prompts: () => JSON.stringify(openai.model.chatRequests().map((chat) => chat.messages)),
      creditsUsed: () => openai.creditsUsed(),
      stop: () => openai.stop(),
    },
  ]
}
