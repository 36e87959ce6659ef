// The uses of the text in images against both model backends: the real service with the fake Ollama or
// the fake OpenAI-compatible server, and an in-process stand-in for the OCR engine that answers a fixed
// reading per image (images are told apart by their width, which preparing a small image keeps).
import sharp from 'sharp'
import type { ImageText, TextReader } from '../../src/ocr/types'
import { startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import type { ApiResponse, TestService } from '../support/service'
import type { StructuredReply } from '../support/structured-reply'
import { startOpenAiEnv } from '../model-backends/openai-env'

/** What the stand-in reads in an image: a reading, none (null), an error thrown, or a read that never ends. */
export type StandInText = ImageText | null | Error | 'hang'

export type StandInReader = TextReader & {
  /** The reading of images of `width` from now on. */
  set(width: number, text: StandInText): void
  /** Widths of the images read so far. */
  reads: number[]
}

export function standInReader(): StandInReader {
  const texts = new Map<number, StandInText>()
  const reads: number[] = []
  return {
    reads,
    set: (width, text) => void texts.set(width, text),
    async read(image, signal) {
      const { width = 0 } = await sharp(image).metadata()
      reads.push(width)
      const text = texts.get(width) ?? null
      if (text instanceof Error) throw text
      if (text === 'hang') return new Promise<never>(() => {}) // heeds no signal: the service must not wait for it
      signal.throwIfAborted()
      return text
    },
    close: async () => {},
  }
}

const box = { x: 0, y: 0, width: 10, height: 10 }
/** A reading of `lines` covering `coverage` of the image. */
export const reading = (lines: string[], coverage: number): ImageText => ({
  text: lines.join('\n'),
  lines: lines.map((text) => ({ text, confidence: 0.95, box })),
  coverage,
})

/** What the model server sees of a request, for a reply function. */
export type Asked = { prompt: string }

/** What a test needs of either backend. */
export type Backend = {
  name: 'Ollama' | 'OpenAI-compatible'
  service: TestService
  reader: StandInReader | null
  generate(body: Record<string, unknown>): Promise<ApiResponse>
  review(body: Record<string, unknown>): Promise<ApiResponse>
  serve(bytes: Uint8Array): string
  /** The model's answers from now on (requests and the behaviour reset first): a fixed reply or one per request, and structured fields. */
  model(answer: { reply?: string | ((asked: Asked) => string); structured?: StructuredReply | null; complex?: boolean }): void
  /** Every message the model server got since the last model() call, as JSON text. */
  prompts(): string
  /** Model calls since the last model() call. */
  calls(): number
  stop(): Promise<void>
}

let width = 200
/** A PNG of a width no other image of the run has, and the width. */
export function uniqueImage(): { png: Uint8Array; width: number } {
  width += 1
  return { png: makePng(width, 60), width }
}

/** Both backends with the stand-in reader (`ocr: true`), with the OCR off (`false`), or with the real engine (`'real'`: ALTTEXT_OCR=on). */
export async function startBackends(ocr: boolean | 'real'): Promise<Backend[]> {
  const ollamaReader = ocr === true ? standInReader() : null
  const openaiReader = ocr === true ? standInReader() : null
  const options = (reader: StandInReader | null) => (ocr === 'real' ? { env: { ALTTEXT_OCR: 'on' } } : { overrides: { textReader: reader } })
  const [ollama, openai] = await Promise.all([startAltTextEnv(options(ollamaReader)), startOpenAiEnv(options(openaiReader))])
  return [
    {
      name: 'Ollama',
      service: ollama.service,
      reader: ollamaReader,
      generate: (body) => ollama.generate(body),
      review: (body) => ollama.service.api.post('/api/alt-text/review', body, ollama.key),
      serve: (bytes) => ollama.serve(bytes),
      model(answer) {
        ollama.ollama.reset()
        const reply = answer.reply
        ollama.ollama.behave({
          ...(reply !== undefined && { reply: typeof reply === 'function' ? (context) => reply({ prompt: context.prompt }) : reply }),
          structured: answer.structured ?? null,
          complex: answer.complex ? () => true : null,
        })
      },
      prompts: () => JSON.stringify(ollama.ollama.chatRequests().map((chat) => chat.messages)),
      calls: () => ollama.ollama.chatRequests().length,
      stop: () => ollama.stop(),
    },
    {
      name: 'OpenAI-compatible',
      service: openai.service,
      reader: openaiReader,
      generate: (body) => openai.generate(body),
      review: (body) => openai.service.api.post('/api/alt-text/review', body, openai.key),
      serve: (bytes) => openai.serve(bytes),
      model(answer) {
        openai.model.reset()
        const reply = answer.reply
        openai.model.behave({
          ...(reply !== undefined && { reply: typeof reply === 'function' ? (context) => reply({ prompt: context.prompt }) : reply }),
          structured: answer.structured ?? null,
          complex: answer.complex ? () => true : null,
        })
      },
      prompts: () => JSON.stringify(openai.model.chatRequests().map((chat) => chat.messages)),
      calls: () => openai.model.chatRequests().length,
      stop: () => openai.stop(),
    },
  ]
}
