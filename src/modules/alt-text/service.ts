// Generation of alt text for one image, the orchestration: refuse an account with no credit left, fetch
// and check the image (or check the one uploaded with the request), answer from the cache when we can,
// share one model call between identical concurrent requests, hold a credit, prepare the image, wait for
// a model slot, ask the model (conversation.ts), cache the entry (response.ts), charge, record. What a
// failed stage tells the client is failures.ts's.
import { type CreditHold, type CreditLedger, CreditsHeldError } from '../../credits/service'
import type { FetchedImage, ImageIntake, ImageSource, PreparedImage, ReceivedImage } from '../../intake'
import type { ModelProvider } from '../../model-provider/provider'
import type { TextReader } from '../../ocr/types'
import { sha256Hex } from '../../shared/crypto'
import { ApiError, ClientClosedError } from '../../shared/errors'
import { type Following, shareFlight } from '../../shared/flight'
import type { Logger } from '../../shared/logger'
import type { AltTextCacheStore, CachedAltText } from '../../store/contract'
import type { Caller } from '../auth/service'
import type { HistoryRecorder } from '../history/service'
import { createConversation, type Reply, type Turn } from './conversation'
import { type Attempt, clientGone, stageFailures } from './failures'
import { type Reading, readImageText } from './image-text'
import type { LanguageRetryOutcome } from './language'
import { type AltTextRequest, type AltTextResult, requestedLanguages } from './model'
import { type PromptInput, promptInput } from './prompt'
import type { GenerationQueue } from './queue'
import { type Answering, cacheEntry, languagesBody, responseBody } from './response'

/**
 * The stages of a request, as Server-Timing names them. `receive` (reading an upload) is timed by the
 * route; `translate` is the further languages of a `languages` request, from the first one's text.
 */
export type Stage = 'receive' | 'inspect' | 'fetch' | 'cache' | 'prepare' | 'ocr' | 'queue' | 'model' | 'translate' | 'charge'

/** Where a request's time went, in ms (sent as Server-Timing): only the stages it went through. */
export type StageTimings = Partial<Record<Stage, number>>

/**
 * A validated request and its image: the bytes that came with it (`upload`), else its image_url. An
 * upload comes with its account's upload place (see ImageIntake.uploadPlace), which the service lets go
 * once the bytes have served their purpose.
 */
export type AltTextInput = AltTextRequest & { upload?: ReceivedImage; uploadPlace?: () => void }

/**
 * Where a batch item's answer goes (see AltTextService.generateItem). A fresh answer's credit is charged
 * by `charged`, in the same transaction that records the answer, so a crash can never leave one
 * without the other.
 */
export type ItemRecorder = {
  /** The batch item's row: its credit hold belongs to its claim (a takeover of the item ends it). */
  itemId: number
  /** Records a free answer (the cache's, or a generation an identical request paid for). */
  free(result: AltTextResult): Promise<void>
  /**
   * Charges one credit of `period` per credit hold of `holdIds` (one per language generated), ends those
   * holds and records the answer in one transaction; `result` is built from the period's charged count
   * after the charge. Returns that count, or null when the account is gone.
   */
  charged(period: string, result: (used: number) => AltTextResult, holdIds: number[]): Promise<number | null>
}

export interface AltTextService {
  /** Throws 429 quota_exceeded when the caller has no credit left: the route asks before it reads an upload. */
  requireCredit(caller: Caller): Promise<void>
  /** One of the caller's upload places, taken before an upload is read (see ImageIntake.uploadPlace). */
  uploadPlace(caller: Caller, signal: AbortSignal): Promise<() => void>
  /** `timings`, when given, is filled in as the request goes. */
  generate(caller: Caller, input: AltTextInput, signal: AbortSignal, timings?: StageTimings): Promise<AltTextResult>
  /**
   * A batch item, through the same pipeline as a single call (cache, single-flight, credits, queue), as
   * background work: it waits for a model slot after every interactive request and without a deadline;
   * the deadline counts twice, once for fetching and preparing the image and once from the moment the
   * model slot is taken. `signal` is the runner's (shutdown): when it aborts, nothing is charged or
   * recorded and ClientClosedError is thrown. The answer is recorded through `record` before this returns.
   * `timings`, when given, is filled in as the item goes.
   */
  generateItem(caller: Caller, input: AltTextInput, signal: AbortSignal, record: ItemRecorder, timings?: StageTimings): Promise<AltTextResult>
}

export type AltTextDeps = {
  intake: ImageIntake
  model: ModelProvider
  credits: CreditLedger
  cache: AltTextCacheStore
  queue: GenerationQueue
  /** Told each outcome once: an answer (generated or cached) with what it was for, or a failure. */
  history: HistoryRecorder
  logger: Logger
  clock: () => number
  cacheTtlMs: number
  /** ALTTEXT_CACHE_SCOPE: `account` keeps each account's cached answers (and identical work under way) to itself. */
  cacheScope: 'account' | 'shared'
  /** The whole request's deadline (spec: 15 s), counted on performance.now(). */
  deadlineMs: number
  /** Told of each answer that was not in the language asked for: translated, or still not in it. */
  onLanguageRetry?: (outcome: LanguageRetryOutcome) => void
  /** Reads the text in prepared images (src/ocr); null or absent: ALTTEXT_OCR=off, the model reads it alone. */
  textReader?: TextReader | null
}

/** Runs work that counts a failure in the account's daily history; a client that hung up did not fail, it left. */
export function countFailures(history: HistoryRecorder, clock: () => number) {
  /** `retried`: an error after which the caller tries again (not a failure of the request). */
  return async <T>(caller: Caller, work: () => Promise<T>, uploadDone?: () => void, retried?: (error: unknown) => boolean): Promise<T> => {
    try {
      return await work()
    } catch (error) {
      if (!(error instanceof ClientClosedError) && !retried?.(error)) history.record({ accountId: caller.org.id, at: clock(), outcome: 'failed' })
      throw error
    } finally {
      uploadDone?.()
    }
  }
}

/** Times each stage into `timings` on the monotonic clock, a failed one too. */
export function stageTimer(timings: StageTimings) {
  return {
    async time<T>(stage: Stage, work: () => Promise<T>): Promise<T> {
      const started = performance.now()
      try {
        return await work()
      } finally {
        timings[stage] = performance.now() - started
      }
    },
  }
}

/** Part of every cache key: raised when cleaning changes, so no entry cleaned the old way is served again. */
const CACHE_FORMAT = 3

/** Everything that changes the answer: the image bytes, the model, the request's normal form, and whether the OCR reads the image. */
export function cacheKey(imageHash: string, model: string, input: PromptInput, ocr = false): string {
  const parts: unknown[] = [CACHE_FORMAT, imageHash, model, input.language, input.style, input.maxLength, input.context, input.keywords]
  // Appended only when asked, so the keys of every other request stay those of entries cached before.
  if (input.detectDecorative) parts.push('detect_decorative')
  if (input.longDescription) parts.push('long_description')
  // Turning ALTTEXT_OCR on or off serves no answer made the other way.
  if (ocr) parts.push('ocr')
  return sha256Hex(JSON.stringify(parts))
}

/**
 * The key of a translation: a further language of a `languages` request, made from the first language's
 * alt text (`source`), which is part of the key, so a new first text gets new translations.
 */
export function translationKey(imageHash: string, model: string, input: PromptInput, source: string): string {
  const { language, maxLength, style } = input
  return sha256Hex(JSON.stringify([CACHE_FORMAT, 'translation', imageHash, model, language, style, maxLength, source]))
}

/** One language's answer as this request gets it: its entry, and the credit hold to charge when this request led its generation. */
type LanguageAnswer = { entry: CachedAltText; hold?: CreditHold }

/** What came of each further language of a `languages` request: its answer, or failed (nothing charged). */
type Translated = LanguageAnswer | { failed: true }

/** Errors that fail one translated language, not the request: the model's failure, the deadline, no credit for it. */
const TRANSLATION_FAILURES: ReadonlySet<string> = new Set(['upstream_error', 'upstream_timeout', 'overloaded', 'quota_exceeded'])

/**
 * The key of an account's own entry (scope `account`): its id is part of the key, so neither a cached
 * answer nor a generation under way is shared with another account, which would get it free and learn
 * that someone described the image. `null` (scope `shared`): the key as it is.
 */
function scopedCacheKey(key: string, accountId: number | null): string {
  return accountId === null ? key : sha256Hex(JSON.stringify([key, 'account', accountId]))
}

/**
 * One request on its way: who asked and its signals (failures.ts), its deadline (conversation.ts; on the
 * monotonic clock, while `clock` is business time: periods, expiry, cache age), what its answer says of it
 * (response.ts), and its stage timer.
 */
type Run = Attempt &
  Turn &
  Answering & {
    timer: ReturnType<typeof stageTimer>
    /** Frees the upload's place: once it is prepared, or when this request needs its bytes no more. */
    uploadDone: () => void
    /** A batch item: its answer's recorder and its two-part deadline (see generateItem). */
    item?: { record: ItemRecorder; deadline: ItemDeadline }
  }

/** A deadline that can be paused while a batch item waits for a model slot and started afresh once it has one. */
type ItemDeadline = { signal: AbortSignal; pause(): void; restart(run: Run): void; clear(): void }

function itemDeadline(ms: number): ItemDeadline {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  const arm = () => {
    clearTimeout(timer)
    timer = setTimeout(() => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')), ms)
    timer.unref()
  }
  arm()
  return {
    signal: controller.signal,
    pause: () => clearTimeout(timer),
    restart(run) {
      arm()
      run.deadline = performance.now() + ms
    },
    clear: () => clearTimeout(timer),
  }
}

export function createAltTextService(deps: AltTextDeps): AltTextService {
  const { intake, model, credits, cache, queue, history, logger, clock } = deps
  /** Generations under way, by cache key: identical requests wait for the one there is. */
  const inflight = new Map<string, Promise<CachedAltText>>()
  const conversation = createConversation(deps)
  const failure = stageFailures(deps)

  /** Runs one stage: timed, and its failure told truthfully (see stageFailures). */
  const step = async <T>(run: Run, stage: Stage, work: () => Promise<T>): Promise<T> => {
    try {
      return await run.timer.time(stage, work)
    } catch (error) {
      throw failure(error, stage, run)
    }
  }

  /** Sets up the run (signals, deadline, timer) and goes through its steps. */
  const generate = async (
    caller: Caller,
    request: AltTextInput,
    clientSignal: AbortSignal,
    timings: StageTimings,
    record?: ItemRecorder,
  ): Promise<AltTextResult> => {
    const startedAt = performance.now()
    const deadline = record ? itemDeadline(deps.deadlineMs) : null
    const signal = AbortSignal.any([clientSignal, deadline ? deadline.signal : AbortSignal.timeout(deps.deadlineMs)])
    const source: ImageSource = request.upload ? 'upload' : 'url'
    const uploadDone = request.uploadPlace ?? (() => {})
    const run: Run = {
      caller,
      clientSignal,
      signal,
      deadline: startedAt + deps.deadlineMs,
      startedAt,
      timer: stageTimer(timings),
      source,
      uploadDone,
      longDescription: request.long_description === true,
    }
    if (record && deadline) run.item = { record, deadline }
    try {
      return await steps(request, run)
    } finally {
      deadline?.clear()
    }
  }

  /** The steps of a request, in order: credit check, image, cache, generation (shared or led), record. */
  const steps = async (request: AltTextInput, run: Run): Promise<AltTextResult> => {
    const { caller } = run
    // The balance comes first: with no credit left the answer is 429 without fetching the image, even
    // when it would be a (free) cache hit, which only the image bytes could tell.
    await credits.requireCredit(caller.org.account, clock())
    const image = await obtainImage(request, run)
    if (request.languages !== undefined) {
      const result = await generateLanguages(request, requestedLanguages(request), image, run)
      await recordOutcome(result, image, promptInput(request, result.language), run)
      return result
    }
    const input = promptInput(request)
    const key = keyFor(image, input, run)
    const hit = await lookUpCache(key, run)
    const result = hit ? await respondFree(hit, run) : await generateShared(image, input, key, run)
    await recordOutcome(result, image, input, run)
    return result
  }

  /** The cache key (and single-flight key) of a generation from the image, in the cache scope. */
  const keyFor = (image: FetchedImage, input: PromptInput, run: Run) =>
    scopedCacheKey(cacheKey(image.contentHash, model.model, input, Boolean(deps.textReader)), deps.cacheScope === 'account' ? run.caller.org.id : null)

  /** The image, checked: the upload that came with the request, or the one fetched from its URL. */
  const obtainImage = (request: AltTextInput, run: Run): Promise<FetchedImage> => {
    const owner = run.caller.account.id
    const { upload, image_url: url } = request
    if (upload) return step(run, 'inspect', () => intake.accept(upload, run.signal, owner))
    // The route lets no request through without exactly one source; this keeps the service honest alone.
    if (!url) throw new ApiError('invalid_request', 'send exactly one image source: image_url, image_base64, or a multipart file in the field image')
    return step(run, 'fetch', () => intake.fetch(url, run.signal, owner))
  }

  const lookUpCache = (key: string, run: Run) => step(run, 'cache', () => cache.get(key, clock()))

  /** An answer someone else paid for (the cache, or a generation shared with an identical request): free. */
  const respondFree = async (entry: CachedAltText, run: Run): Promise<AltTextResult> => {
    const balance = await credits.balance(run.caller.org.account, clock())
    return responseBody(entry, true, balance.remaining, run)
  }

  /**
   * The generation for `key`: an identical request's under way (free, see `following`), or one this
   * request leads, for which a credit is held and charged only when the answer can be sent.
   */
  const generateShared = async (image: FetchedImage, input: PromptInput, key: string, run: Run): Promise<AltTextResult> => {
    const answer = await shared(key, run, () => generateFresh(image, input, key, run))
    return answer.hold ? chargeAndRespond(answer.entry, answer.hold, image, run) : respondFree(answer.entry, run)
  }

  /**
   * The work for `key`, done once however many identical requests ask for it at the same time: led here,
   * with a credit held for it (returned, to be charged when the answer can be sent), or followed (free).
   */
  const shared = async (key: string, run: Run, work: () => Promise<CachedAltText>): Promise<LanguageAnswer> => {
    // A flight is registered before its first await, so an identical request arriving meanwhile follows
    // it instead of starting (and paying for) a second model call.
    let hold: CreditHold | undefined
    let flight: { value: CachedAltText; led: boolean }
    try {
      flight = await shareFlight(
        inflight,
        key,
        async () => {
          hold = await credits.reserve(run.caller.org.account, clock(), run.item?.record.itemId)
          return work()
        },
        following(run),
      )
    } catch (error) {
      await hold?.release()
      throw error
    }
    if (!flight.led) return { entry: flight.value }
    if (!hold) throw new Error('a generation ended without its credit hold')
    return { entry: flight.value, hold }
  }

  /**
   * A `languages` request: the first language as a `language` request makes it (cache, single flight,
   * one vision call), then each further one translated from its text, text only, each cached and shared
   * per language. A failed first language fails the request; a failed translation is only left out
   * (failed_languages). One credit per language this request generated, charged together at the end.
   */
  const generateLanguages = async (request: AltTextInput, tags: string[], image: FetchedImage, run: Run): Promise<AltTextResult> => {
    const inputs = tags.map((tag) => promptInput(request, tag))
    const [firstInput, ...furtherInputs] = inputs as [PromptInput, ...PromptInput[]]
    const holds: CreditHold[] = []
    try {
      const firstKey = keyFor(image, firstInput, run)
      const hit = await lookUpCache(firstKey, run)
      const first: LanguageAnswer = hit ? { entry: hit } : await shared(firstKey, run, () => generateFresh(image, firstInput, firstKey, run))
      if (first.hold) holds.push(first.hold)
      const further = await run.timer.time('translate', () => translateAll(first.entry, furtherInputs, image, run))
      for (const answer of further) if ('hold' in answer && answer.hold) holds.push(answer.hold)
      const answers = [first, ...further]
      const returned = inputs.flatMap((input, i) => ('entry' in answers[i]! ? [{ tag: input.language, entry: (answers[i] as LanguageAnswer).entry }] : []))
      const failed = inputs.filter((_, i) => 'failed' in answers[i]!).map((input) => input.language)
      const body = (fresh: boolean, remaining: number) => languagesBody(returned, failed, !fresh, remaining, run)
      if (holds.length === 0) return body(false, (await credits.balance(run.caller.org.account, clock())).remaining)
      if (clientGone(run)) throw new ClientClosedError('charge')
      const record = run.item?.record
      const chargeWith =
        record && ((period: string, total: number, holdIds: number[]) => record.charged(period, (used) => body(true, Math.max(0, total - used)), holdIds))
      const [primary, ...alongside] = holds as [CreditHold, ...CreditHold[]]
      const remaining = await run.timer.time('charge', () => primary.commit(chargeWith, alongside))
      holds.length = 0
      logger.info('alt text generated', {
        account_id: run.caller.account.id,
        model: model.model,
        format: image.format,
        languages: returned.length,
        failed_languages: failed.length,
        source: run.source,
        ms: Math.round(performance.now() - run.startedAt),
      })
      return body(true, remaining)
    } finally {
      // Not answered (a failure, or the client gone): not charged; what was generated stays cached.
      for (const hold of holds) await hold.release()
    }
  }

  /**
   * The further languages: at once for an interactive request (each in a model slot of its own, as the
   * queue allows), one after another for a batch item, whose deadline pauses while it waits for a slot.
   */
  const translateAll = async (source: CachedAltText, inputs: PromptInput[], image: FetchedImage, run: Run): Promise<Translated[]> => {
    if (run.item) {
      const done: Translated[] = []
      try {
        for (const input of inputs) done.push(await translation(source, input, image, run))
      } catch (error) {
        for (const answer of done) if ('hold' in answer) await answer.hold?.release()
        throw error
      }
      return done
    }
    const settled = await Promise.allSettled(inputs.map((input) => translation(source, input, image, run)))
    const fatal = settled.find((outcome) => outcome.status === 'rejected')
    if (fatal) {
      for (const outcome of settled) if (outcome.status === 'fulfilled' && 'hold' in outcome.value) await outcome.value.hold?.release()
      throw fatal.reason
    }
    return settled.map((outcome) => (outcome as PromiseFulfilledResult<Translated>).value)
  }

  /** One further language: cached, shared with an identical request's, or translated here; failed when the model could not. */
  const translation = async (source: CachedAltText, input: PromptInput, image: FetchedImage, run: Run): Promise<Translated> => {
    // An image judged decorative has alt="" in every language: nothing to translate, nothing to charge.
    if (source.decorativeReason != null) return { entry: { ...source, language: input.language } }
    const key = scopedCacheKey(translationKey(image.contentHash, model.model, input, source.altText), deps.cacheScope === 'account' ? run.caller.org.id : null)
    try {
      const hit = await cache.get(key, clock())
      if (hit) return { entry: hit }
      return await shared(key, run, () => translateFresh(source, input, key, image, run))
    } catch (error) {
      const mapped = failure(error, 'model', run)
      if (mapped instanceof ApiError && TRANSLATION_FAILURES.has(mapped.code)) {
        logger.warn('a language of the request failed; the others are answered', { model: model.model, language: input.language, code: mapped.code })
        return { failed: true }
      }
      throw mapped
    }
  }

  /** A translation made here: a model slot, one text-only call (and its language check), the cache. */
  const translateFresh = async (source: CachedAltText, input: PromptInput, key: string, image: FetchedImage, run: Run): Promise<CachedAltText> => {
    const item = run.item
    item?.deadline.pause()
    const slot = await (item ? queue.acquireBackground(run.signal) : queue.acquire(run.deadline, run.signal))
    item?.deadline.restart(run)
    let reply: Reply
    try {
      reply = await conversation.translate(source.altText, source.textInImage ?? null, input, run)
    } finally {
      slot.release()
    }
    const entry = cacheEntry(reply, input, model.model, image)
    const now = clock()
    await cache.put(key, entry, now, now + deps.cacheTtlMs)
    return entry
  }

  /**
   * How a request follows an identical one's generation. Only this client's hang-up ends the wait early:
   * the other request started first, so its deadline comes first and ends the wait with its own error,
   * which this request shares as it would share the answer. The leader's client hanging up, or the
   * leader having no credit to hold, says nothing of this request: it then generates once more, the
   * first of the waiting requests leading and the others following it.
   */
  const following = (run: Run): Following => ({
    signal: run.clientSignal,
    gone: () => new ClientClosedError('model'),
    personal: (error) => error instanceof ClientClosedError || (error instanceof ApiError && error.code === 'quota_exceeded'),
    onFollow: () => {
      // Another request prepares this image: this one's bytes are not needed any more.
      run.uploadDone()
      logger.info('waiting for an identical generation under way', { account_id: run.caller.account.id, model: model.model })
    },
  })

  /** The work for one cache key, done once however many identical requests wait for it; fails as stageFailures says. */
  const generateFresh = async (image: FetchedImage, input: PromptInput, key: string, run: Run): Promise<CachedAltText> => {
    const owner = run.caller.account.id
    let prepared: PreparedImage
    try {
      prepared = await step(run, 'prepare', () => intake.prepare(image, run.signal, owner))
    } finally {
      run.uploadDone()
    }
    // The text is read while the request waits for a model slot; a failed reading is no reading (see readImageText).
    const ocrStop = new AbortController()
    const reading = deps.textReader
      ? run.timer.time('ocr', () => readImageText(deps.textReader, prepared, AbortSignal.any([run.signal, ocrStop.signal]), logger))
      : Promise.resolve(null)
    const item = run.item
    item?.deadline.pause()
    let read: Reading | null
    let reply: Reply
    try {
      const slot = await step(run, 'queue', () => (item ? queue.acquireBackground(run.signal) : queue.acquire(run.deadline, run.signal)))
      item?.deadline.restart(run)
      try {
        read = await reading
        reply = await step(run, 'model', () => conversation.describe(prepared, input, run, read))
      } finally {
        slot.release()
      }
    } finally {
      ocrStop.abort()
    }
    const entry = cacheEntry(reply, input, model.model, image)
    // An answer made without the reading the OCR failed to give is not kept: the next request reads again.
    if (deps.textReader && read === null) return entry
    const now = clock()
    await cache.put(key, entry, now, now + deps.cacheTtlMs)
    return entry
  }

  /** The led generation's answer: its held credit charged, unless the client is gone and it is not answered. */
  const chargeAndRespond = async (entry: CachedAltText, held: CreditHold, image: FetchedImage, run: Run): Promise<AltTextResult> => {
    if (clientGone(run)) {
      // Not answered, so not charged; the result stays cached for the next request.
      await held.release()
      throw new ClientClosedError('charge')
    }
    // Charged before the answer is sent: a crash after this point may charge an answer that was lost
    // in transit, but never answers without charging. A batch item's charge is one transaction with its answer.
    const record = run.item?.record
    const chargeWith =
      record &&
      ((period: string, total: number, holdIds: number[]) =>
        record.charged(period, (used) => responseBody(entry, false, Math.max(0, total - used), run), holdIds))
    const remaining = await run.timer.time('charge', () => held.commit(chargeWith))
    logger.info('alt text generated', {
      account_id: run.caller.account.id,
      model: model.model,
      format: image.format,
      width: image.width,
      height: image.height,
      source: run.source,
      decorative: entry.decorativeReason != null,
      ms: Math.round(performance.now() - run.startedAt),
    })
    return responseBody(entry, false, remaining, run)
  }

  /** The answer in the account's history; a batch item's free answer in its row (a fresh one was recorded with its charge). */
  const recordOutcome = async (result: AltTextResult, image: FetchedImage, input: PromptInput, run: Run): Promise<void> => {
    const { caller, source } = run
    if (run.item && result.cached) await run.item.record.free(result)
    history.record({
      accountId: caller.org.id,
      at: clock(),
      outcome: result.cached ? 'cached' : 'generated',
      entry: {
        source,
        format: image.format,
        bytes: image.bytes.byteLength,
        width: image.width,
        height: image.height,
        altText: result.alt_text,
        decorative: result.decorative,
        language: input.language,
        style: input.style,
        maxLength: input.maxLength,
        characterCount: result.character_count,
      },
    })
  }

  const counted = countFailures(history, clock)

  return {
    requireCredit: (caller) => counted(caller, async () => void (await credits.requireCredit(caller.org.account, clock()))),
    uploadPlace: (caller, signal) => intake.uploadPlace(signal, caller.account.id),
    // The upload's place is freed by the end of the request at the latest, whatever happened.
    generate: (caller, request, signal, timings = {}) => counted(caller, () => generate(caller, request, signal, timings), request.uploadPlace),
    generateItem: (caller, request, signal, record, timings = {}) =>
      // A batch item whose credit is held by others waits and tries again (BatchRunner): not a failure yet.
      counted(
        caller,
        () => generate(caller, request, signal, timings, record),
        request.uploadPlace,
        (error) => error instanceof CreditsHeldError,
      ),
  }
}
