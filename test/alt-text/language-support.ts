// The language check over HTTP, the same for both model backends: a `Backend` scripts the fake model
// server's answers (an image request and a text-only one can be told apart) and reads back what the
// service asked it.
import { startAltTextEnv } from '../support/alt-text-env'
import { scrape } from '../support/metrics'
import type { ApiResponse, TestService } from '../support/service'
import { startOpenAiEnv } from '../model-backends/openai-env'

/** What the model server was asked: the prompts, whether an image came with them, whether structured. */
export type Chat = { system: string; user: string; hasImage: boolean; structured: boolean }

export type Backend = {
  name: string
  service: TestService
  serve(bytes: Uint8Array): string
  generate(body: Record<string, unknown>): Promise<ApiResponse>
  key: string
  /** Answers `withImage` to a request with an image, `textOnly` to one without (a translation). */
  answer(withImage: string, textOnly: string): void
  /** Answers each request by `reply` of what was asked (a throw is a 500); `delayMs` before each answer. */
  replyBy(reply: (chat: Pick<Chat, 'system' | 'user' | 'hasImage'>) => string, delayMs?: number): void
  /** Answers `withImage` to the image request, then fails every later request (the translation) with a 500. */
  answerThenFail(withImage: string): void
  chats(): Chat[]
  reset(): void
  creditsUsed(): Promise<number>
  retries(outcome: 'translated' | 'still_wrong'): Promise<number>
  stop(): Promise<void>
}

export const ENGLISH = 'Two children flying a red kite on a windy beach at sunset.'
export const GERMAN = 'Zwei Kinder lassen bei Sonnenuntergang einen roten Drachen am windigen Strand steigen.'
export const NOT_GERMAN = 'is not in German (de)'
export const FRENCH = 'Deux enfants font voler un cerf-volant rouge sur une plage venteuse au coucher du soleil.'
export const PORTUGUESE = 'Duas crianças empinam uma pipa vermelha numa praia com vento ao pôr do sol.'

const retries = (service: TestService) => async (outcome: string) => (await scrape(service.url)).value('alttext_language_retries_total', { outcome })

const creditsUsed = (service: TestService, key: string) => async () => (await service.api.get('/api/usage', key)).body.credits.used as number

/** Service settings for a backend's service (ALTTEXT_FREE_CREDITS, ALTTEXT_CACHE_SCOPE, ...). */
export type BackendOptions = { env?: Record<string, string> }

export async function ollamaBackend(options: BackendOptions = {}): Promise<Backend> {
  const env = await startAltTextEnv(options)
  return {
    name: 'Ollama',
    service: env.service,
    serve: (bytes) => env.serve(bytes),
    generate: env.generate,
    key: env.key,
    answer: (withImage, textOnly) => env.ollama.behave({ reply: ({ images }) => (images.length > 0 ? withImage : textOnly) }),
    replyBy: (reply, delayMs = 0) =>
      env.ollama.behave({
        delayMs,
        reply: ({ messages, prompt, images }) =>
          reply({ system: messages.find((m) => m.role === 'system')?.content ?? '', user: prompt, hasImage: images.length > 0 }),
      }),
    answerThenFail: (withImage) =>
      env.ollama.behave({
        reply: () => {
          env.ollama.behave({ failStatus: 500 })
          return withImage
        },
      }),
    chats: () =>
      env.ollama.chatRequests().map((chat) => {
        const messages = chat.messages ?? []
        return {
          system: messages.find((m) => m.role === 'system')?.content ?? '',
          user: messages.filter((m) => m.role === 'user').at(-1)?.content ?? '',
          hasImage: messages.some((m) => (m.images?.length ?? 0) > 0),
          structured: chat.format !== undefined,
        }
      }),
    reset: () => env.ollama.reset(),
    creditsUsed: creditsUsed(env.service, env.key),
    retries: retries(env.service),
    stop: env.stop,
  }
}

type OpenAiPart = { type: string; text?: string }
type OpenAiMessage = { role: string; content: string | OpenAiPart[] }

export async function openAiBackend(options: BackendOptions = {}): Promise<Backend> {
  const env = await startOpenAiEnv(options)
  const text = (content: OpenAiMessage['content'] | undefined) =>
    typeof content === 'string' ? content : (content ?? []).map((part) => part.text ?? '').join('\n')
  return {
    name: 'OpenAI-compatible',
    service: env.service,
    serve: (bytes) => env.serve(bytes),
    generate: env.generate,
    key: env.key,
    answer: (withImage, textOnly) => env.model.behave({ reply: ({ images }) => (images.length > 0 ? withImage : textOnly) }),
    replyBy: (reply, delayMs = 0) =>
      env.model.behave({ delayMs, reply: ({ images, prompt, system }) => reply({ system, user: prompt, hasImage: images.length > 0 }) }),
    answerThenFail: (withImage) =>
      env.model.behave({
        reply: () => {
          env.model.behave({ failStatus: 500 })
          return withImage
        },
      }),
    chats: () =>
      env.model.chatRequests().map((body) => {
        const messages = body.messages as OpenAiMessage[]
        const user = messages.filter((m) => m.role === 'user').at(-1)
        return {
          system: text(messages.find((m) => m.role === 'system')?.content),
          user: text(user?.content),
          hasImage: messages.some((m) => Array.isArray(m.content) && m.content.some((part) => part.type === 'image_url')),
          structured: body.response_format !== undefined,
        }
      }),
    reset: () => env.model.reset(),
    creditsUsed: env.creditsUsed,
    retries: retries(env.service),
    stop: env.stop,
  }
}
