// Generation of alt text for one image: fetch and check the image, answer from the cache when we can,
// share one model call between identical concurrent requests, hold a credit, wait for a model slot,
// ask the model, clean and fit the text, check it against WCAG, charge, cache.
import type { CreditLedger } from '../../credits/service'
import type { ImageIntake } from '../../intake'
import { ModelError, type ModelProvider } from '../../model-provider/provider'
import { raceAbort } from '../../shared/abort'
import { sha256Hex } from '../../shared/crypto'
import { ApiError } from '../../shared/errors'
import type { Logger } from '../../shared/logger'
import type { AltTextCacheStore, CachedAltText } from '../../store/types'
import type { Caller } from '../auth/service'
import type { AltTextRequest, AltTextResult } from './model'
import { buildPrompt, buildShortenPrompt, type PromptInput } from './prompt'
import type { GenerationQueue } from './queue'
import { characterCount, cleanAltText, fitToLength } from './text'
import { checkWcag } from './wcag'

/** Where a request's time went, in ms (sent as Server-Timing): only the stages it went through. */
export type StageTimings = Partial<Record<'fetch' | 'cache' | 'prepare' | 'queue' | 'model' | 'charge', number>>

export interface AltTextService {
  /** `timings`, when given, is filled in as the request goes. */
  generate(caller: Caller, request: AltTextRequest, signal: AbortSignal, timings?: StageTimings): Promise<AltTextResult>
}

export type AltTextDeps = {
  intake: ImageIntake
  model: ModelProvider
  credits: CreditLedger
  cache: AltTextCacheStore
  queue: GenerationQueue
  logger: Logger
  clock: () => number
  cacheTtlMs: number
  /** The whole request's deadline (spec: 15 s), counted on performance.now(). */
  deadlineMs: number
}

/** Keywords are a set: order and case do not change the answer, so they do not split the cache. */
export function normaliseKeywords(keywords: string[] | null | undefined): string[] {
  return [...new Set((keywords ?? []).map((k) => k.trim()).filter(Boolean))].sort((a, b) => a.localeCompare(b))
}

/** Everything that changes the answer: the image bytes, the model and every option. */
export function cacheKey(imageHash: string, model: string, input: PromptInput): string {
  return sha256Hex(JSON.stringify([imageHash, model, input.language, input.style, input.maxLength, input.context ?? null, input.keywords ?? []]))
}

/** Tokens for `maxLength` characters with room to spare: about 3 characters a token, more for other scripts. */
export const maxTokensFor = (maxLength: number) => Math.ceil(maxLength / 2) + 48

export function createAltTextService(deps: AltTextDeps): AltTextService {
  const { intake, model, credits, cache, queue, logger, clock } = deps
  const inflight = new Map<string, Promise<CachedAltText>>()

  const askModel = async (
    prompt: { system: string; user: string },
    image: { data: Uint8Array; mime: 'image/png' | 'image/jpeg' },
    maxLength: number,
    signal: AbortSignal,
  ) => model.describe({ image, system: prompt.system, prompt: prompt.user, maxTokens: maxTokensFor(maxLength), signal })

  /** The model work for one cache key; runs once however many identical requests wait for it. */
  const produce = async (
    image: Awaited<ReturnType<ImageIntake['fetch']>>,
    input: PromptInput,
    key: string,
    deadline: number,
    signal: AbortSignal,
    timings: StageTimings,
  ): Promise<CachedAltText> => {
    let mark = performance.now()
    const prepared = await intake.prepare(image, signal)
    timings.prepare = performance.now() - mark
    mark = performance.now()
    return queue.run(
      async () => {
        timings.queue = performance.now() - mark
        mark = performance.now()
        let text = cleanAltText(await askModel(buildPrompt(input), prepared, input.maxLength, signal), input.language)
        if (!text) throw new ModelError('malformed', `model ${model.model} returned no usable text`)
        if (characterCount(text) > input.maxLength && deadline - performance.now() > queue.stats().averageMs * 1.2) {
          // One more try for a text that fits, while the deadline allows; else cut at a boundary.
          const shorter = await askModel(buildShortenPrompt(input, text), prepared, input.maxLength, signal)
            .then((raw) => cleanAltText(raw, input.language))
            .catch((error: unknown) => {
              if (signal.aborted) throw error
              logger.warn('shortening call failed; cutting the first answer', { error: error instanceof Error ? error.message : String(error) })
              return ''
            })
          if (shorter && characterCount(shorter) <= input.maxLength) text = shorter
        }
        if (characterCount(text) > input.maxLength) text = fitToLength(text, input.maxLength, input.language)
        timings.model = performance.now() - mark
        const wcag = checkWcag(text, input.maxLength, input.language)
        const entry: CachedAltText = {
          altText: text,
          wcagCompliant: wcag.compliant,
          wcagIssues: wcag.issues,
          language: input.language,
          model: model.model,
          width: image.width,
          height: image.height,
          format: image.format,
        }
        const now = clock()
        await cache.put(key, entry, now, now + deps.cacheTtlMs)
        return entry
      },
      deadline,
      signal,
    )
  }

  const respond = (entry: CachedAltText, cached: boolean, creditsRemaining: number, startedAt: number): AltTextResult => {
    const count = characterCount(entry.altText)
    return {
      alt_text: entry.altText,
      credits_remaining: creditsRemaining,
      wcag_compliant: entry.wcagCompliant,
      character_count: count,
      processing_time_ms: Math.round(performance.now() - startedAt),
      length: count,
      language: entry.language,
      cached,
      wcag_issues: entry.wcagIssues,
      model: entry.model,
      image: { width: entry.width, height: entry.height, format: entry.format },
    }
  }

  /** Maps model failures to the contract: deadline → 504, anything else upstream → 502 (details to the log). */
  const upstreamError = (error: unknown, deadlineSignal: AbortSignal, context: Record<string, unknown>): unknown => {
    if (error instanceof ApiError) return error
    if (deadlineSignal.aborted) {
      logger.warn('model call aborted at the deadline', { ...context, model: model.model, deadline_ms: deps.deadlineMs })
      return new ApiError('upstream_timeout', `the model did not answer within ${deps.deadlineMs / 1000} seconds; nothing was charged`)
    }
    if (error instanceof ModelError) {
      logger.error('model call failed', { ...context, failure: error.kind, detail: error.message, upstream_status: error.status })
      const what =
        error.kind === 'unreachable'
          ? 'the model server is unreachable'
          : error.kind === 'model_not_found'
            ? 'the model is not installed on the model server'
            : 'the model server failed'
      return new ApiError('upstream_error', `${what}; nothing was charged, retry later (the operator log has details)`)
    }
    return error
  }

  const generate = async (caller: Caller, request: AltTextRequest, clientSignal: AbortSignal, timings: StageTimings, attempt = 0): Promise<AltTextResult> => {
    const startedAt = performance.now()
    // Deadlines run on the monotonic clock; `clock` is business time (periods, expiry, cache age).
    const deadline = performance.now() + deps.deadlineMs
    const deadlineSignal = AbortSignal.timeout(deps.deadlineMs)
    const signal = AbortSignal.any([clientSignal, deadlineSignal])
    const context = { account_id: caller.account.id }

    const image = await intake.fetch(request.image_url, signal)
    timings.fetch = performance.now() - startedAt
    const input: PromptInput = {
      language: request.language,
      style: request.style,
      context: request.context || null,
      keywords: normaliseKeywords(request.keywords),
      maxLength: request.max_length,
    }
    const key = cacheKey(image.contentHash, model.model, input)

    let mark = performance.now()
    const hit = await cache.get(key, clock())
    timings.cache = performance.now() - mark
    if (hit) {
      const balance = await credits.balance(caller.account, clock())
      return respond(hit, true, balance.remaining, startedAt)
    }

    const shared = inflight.get(key)
    if (shared) {
      // An identical request is being generated: wait for it, then it is a cache hit (no credit).
      try {
        const entry = await raceAbort(shared, signal, () => new ModelError('aborted', 'wait for a shared generation aborted'))
        const balance = await credits.balance(caller.account, clock())
        return respond(entry, true, balance.remaining, startedAt)
      } catch (error) {
        // The leader's client went away and took the call with it: this request does its own.
        if (error instanceof ModelError && error.kind === 'aborted' && !signal.aborted && attempt === 0)
          return generate(caller, request, clientSignal, timings, 1)
        throw upstreamError(error, deadlineSignal, context)
      }
    }

    const hold = await credits.reserve(caller.account, clock())
    const generation = produce(image, input, key, deadline, signal, timings)
    inflight.set(key, generation)
    generation.then(
      () => inflight.delete(key),
      () => inflight.delete(key),
    )
    let entry: CachedAltText
    try {
      entry = await generation
    } catch (error) {
      await hold.release()
      throw upstreamError(error, deadlineSignal, context)
    }
    if (clientSignal.aborted) {
      // Not answered, so not charged; the result stays cached for the next request.
      await hold.release()
      throw new ApiError('upstream_timeout', 'the client closed the connection before the answer')
    }
    // Charged before the answer is sent: a crash after this point may charge an answer that was lost
    // in transit, but never answers without charging.
    mark = performance.now()
    const remaining = await hold.commit()
    timings.charge = performance.now() - mark
    logger.info('alt text generated', {
      ...context,
      model: model.model,
      format: image.format,
      width: image.width,
      height: image.height,
      ms: Math.round(performance.now() - startedAt),
    })
    return respond(entry, false, remaining, startedAt)
  }

  return { generate: (caller, request, signal, timings = {}) => generate(caller, request, signal, timings) }
}
