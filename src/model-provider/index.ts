// Chooses the model provider the config names (ALTTEXT_MODEL_API), one per host of ALTTEXT_MODEL_HOSTS, in a pool.
import type { Config } from '../config'
import type { Logger } from '../shared/logger'
import { createOllamaProvider } from './ollama'
import { createOpenAiProvider } from './openai'
import { createModelPool, type ModelPool, type PoolBackoff } from './pool'
import type { ModelProvider } from './provider'

export function createModelProvider(config: Pick<Config, 'modelApi' | 'ollamaHost' | 'model' | 'modelApiKey'>, host = config.ollamaHost): ModelProvider {
  if (config.modelApi === 'openai') return createOpenAiProvider({ host, model: config.model, apiKey: config.modelApiKey })
  return createOllamaProvider({ host, model: config.model })
}

export function createModelHostPool(
  config: Pick<Config, 'modelApi' | 'ollamaHost' | 'modelHosts' | 'model' | 'modelApiKey' | 'modelConcurrency'>,
  options: { logger?: Logger; backoff?: Partial<PoolBackoff>; onChange?: () => void } = {},
): ModelPool {
  return createModelPool({
    hosts: config.modelHosts.map((url) => ({ url, provider: createModelProvider(config, url) })),
    concurrency: config.modelConcurrency,
    ...options,
  })
}
