// The model host checks of `alttext doctor`: each host of ALTTEXT_MODEL_HOSTS answers its health check
// with the configured model, and then describes a real image within a request's deadline.
import type { Config } from '../../../config'
import { createModelProvider } from '../../../model-provider'
import type { HealthProblem, ModelProvider } from '../../../model-provider/provider'
import { maxTokensFor } from '../../../modules/alt-text/conversation'
import { buildPrompt, promptInput } from '../../../modules/alt-text/prompt'
import { cleanAltText } from '../../../modules/alt-text/text'
import { GENERATION_DEADLINE_MS, GENERATION_DEADLINE_SECONDS } from '../../../shared/limits'
import { type CheckResult, errorText, result, seconds } from '../result'
// A red square on white, 256 px: any vision model describes it, and it is embedded in the binary.
import testImagePath from '../test-image.png' with { type: 'file' }

function modelFix(problem: HealthProblem | undefined, config: Config, host: string): string {
  const openai = config.modelApi === 'openai'
  switch (problem) {
    case 'model_missing':
      return openai
        ? `serve ${config.model} on ${host} (vLLM --served-model-name, llama-server --alias), or set ALTTEXT_MODEL to a name its /v1/models lists`
        : `run "ollama pull ${config.model}" on ${host}, or set ALTTEXT_MODEL to a vision model it has`
    case 'no_vision':
      return 'set ALTTEXT_MODEL to a vision model (docs/models.md lists some for each kind of hardware)'
    case 'unreachable':
      return `start the model server at ${host}, or correct ALTTEXT_MODEL_HOSTS (or OLLAMA_HOST); check firewalls between the two`
    default:
      return `${host} answered, but not as ${openai ? 'an OpenAI-compatible' : 'an Ollama'} server should: check ALTTEXT_MODEL_API${openai ? ' and ALTTEXT_MODEL_API_KEY' : ''}`
  }
}

async function hostCheck(provider: ModelProvider, config: Config, host: string, timeoutMs: number): Promise<CheckResult> {
  const name = `model host ${host}`
  const health = await provider.health(AbortSignal.timeout(timeoutMs)).catch((error: unknown) => ({
    ok: false,
    detail: errorText(error),
    publicDetail: '',
    problem: 'failed' as const,
  }))
  if (health.ok) return result('model_host', name, 'pass', `${health.detail} (${config.modelApi} API)`)
  return result('model_host', name, 'fail', health.detail, modelFix(health.problem, config, host))
}

async function generationCheck(provider: ModelProvider, host: string, timeoutMs: number): Promise<CheckResult> {
  const name = `test generation on ${host}`
  const input = promptInput({ language: 'en', style: 'descriptive', context: undefined, keywords: [], max_length: 125 })
  // The plain-text prompt: every server answers it (the service asks structured where it may, and falls back to this).
  const prompt = buildPrompt(input)
  const image = new Uint8Array(await Bun.file(testImagePath).arrayBuffer())
  const started = performance.now()
  let raw: string
  try {
    const answer = await provider.describe({
      image: { data: image, mime: 'image/png' },
      system: prompt.system,
      prompt: prompt.user,
      maxTokens: maxTokensFor(input.maxLength),
      signal: AbortSignal.timeout(timeoutMs),
    })
    raw = answer.content
  } catch (error) {
    const ms = performance.now() - started
    return result(
      'test_generation',
      name,
      'fail',
      `failed after ${seconds(ms)}: ${errorText(error)}`,
      'the host passed its check but could not describe an image: see the model server log',
      ms,
    )
  }
  const ms = performance.now() - started
  const text = cleanAltText(raw, input.language)
  if (!text)
    return result('test_generation', name, 'fail', `the model answered no usable text in ${seconds(ms)}`, 'try another vision model (ALTTEXT_MODEL)', ms)
  if (ms > GENERATION_DEADLINE_MS)
    return result(
      'test_generation',
      name,
      'fail',
      `"${text}" took ${seconds(ms)}, longer than a request's ${GENERATION_DEADLINE_SECONDS} s deadline`,
      'the first call after the model server starts loads the model: run alttext doctor again; if it stays slow, use a smaller model or a GPU',
      ms,
    )
  return result('test_generation', name, 'pass', `"${text}" in ${seconds(ms)}`, undefined, ms)
}

/**
 * Checks each model host in turn, handing each result to `add`: its health within `timeoutMs`, then (when
 * that passed) a test generation within `generationTimeoutMs`.
 */
export async function modelHostChecks(
  config: Config,
  { timeoutMs, generationTimeoutMs }: { timeoutMs: number; generationTimeoutMs: number },
  add: (check: CheckResult) => void,
): Promise<void> {
  for (const host of config.modelHosts) {
    const provider = createModelProvider(config, host)
    const hostResult = await hostCheck(provider, config, host, timeoutMs)
    add(hostResult)
    if (hostResult.status === 'pass') add(await generationCheck(provider, host, generationTimeoutMs))
    else add(result('test_generation', `test generation on ${host}`, 'skip', 'the host failed its check'))
  }
}
