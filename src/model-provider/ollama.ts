// Ollama through the official client.
import { Ollama } from 'ollama'
import type { ModelHealth, ModelProvider } from './provider'

/** `llava` means `llava:latest`, as in Ollama itself. */
export function sameModel(installed: string, wanted: string): boolean {
  const withTag = (name: string) => (name.includes(':') ? name : `${name}:latest`)
  return withTag(installed) === withTag(wanted)
}

type FetchFn = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

export function createOllamaProvider(options: { host: string; model: string; fetch?: FetchFn }): ModelProvider {
  const { host, model } = options
  const client = (signal?: AbortSignal) =>
    new Ollama({ host, fetch: ((input: string | URL | Request, init?: RequestInit) => (options.fetch ?? fetch)(input, { ...init, signal: signal ?? init?.signal })) as typeof fetch })

  return {
    name: 'ollama',
    model,
    async health(signal): Promise<ModelHealth> {
      try {
        const { models } = await client(signal).list()
        if (models.some((m) => sameModel(m.name, model) || sameModel(m.model, model))) return { ok: true, detail: `model ${model} present at ${host}` }
        return { ok: false, detail: `model ${model} not found at ${host}: run "ollama pull ${model}"` }
      } catch (error) {
        return { ok: false, detail: `Ollama not reachable at ${host}: ${error instanceof Error ? error.message : String(error)}` }
      }
    },
  }
}
