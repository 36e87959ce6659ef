// Chooses the model provider the config names (ALTTEXT_MODEL_API).
import type { Config } from '../config'
import { createOllamaProvider } from './ollama'
import { createOpenAiProvider } from './openai'
import type { ModelProvider } from './provider'

export function createModelProvider(config: Pick<Config, 'modelApi' | 'ollamaHost' | 'model' | 'modelApiKey'>): ModelProvider {
  if (config.modelApi === 'openai') return createOpenAiProvider({ host: config.ollamaHost, model: config.model, apiKey: config.modelApiKey })
  return createOllamaProvider({ host: config.ollamaHost, model: config.model })
}
