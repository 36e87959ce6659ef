// Generation of alt text for one image: refuse an account with no credit left, fetch and check the
// image (or check the one uploaded with the request), answer from the cache when we can, share one model
// call between identical concurrent requests, hold a credit, prepare the image, wait for a model slot,
// ask the model, clean and fit the text (or take its word that the image is decorative), have it
// translated when it is in another language than asked, check it against WCAG, cache, charge.
import { type CreditHold, type CreditLedger, CreditsHeldError } from '../../credits/service'
import type { FetchedImage, ImageIntake, ImageSource, PreparedImage, ReceivedImage } from '../../intake'
import { ModelError, type ModelProvider } from '../../model-provider/provider'
import { sha256Hex } from '../../shared/crypto'
import { ApiError, ClientClosedError } from '../../shared/errors'
import { type Following, shareFlight } from '../../shared/flight'
import type { Logger } from '../../shared/logger'
import { MAX_LONG_DESCRIPTION_CHARS, MAX_MODEL_ANSWER_CHARS } from '../../shared/limits'
import { StoreBusyError } from '../../store/errors'
import type { AltTextCacheStore, CachedAltText } from '../../store/types'
import type { Caller } from '../auth/service'
import type { HistoryRecorder } from '../history/service'
import { junkCheck } from './junk'
import { type LanguageRetryOutcome, notInLanguage, wrongLanguageIssue } from './language'
import { cleanLongDescription, splitPlainAnswer } from './long-description'
import type { AltTextRequest, AltTextResult } from './model'
import {
  buildPrompt,
  buildShortenPrompt,
  buildTranslatePrompt,
  DECORATIVE_MARKER,
  decorativeReason,
  type Prompt,
  type PromptInput,
  promptInput,
} from './prompt'
import type { GenerationQueue } from './queue'
import { ANSWER_SCHEMA, keepTextInImage, LONG_ANSWER_SCHEMA, normaliseTextInImage, parseStructuredAnswer, salvageAltText } from './structured'
import { characterCount, cleanAltText, fitToLength } from './text'
import { checkWcag } from './wcag'

/** The stages of a request, as Server-Timing names them. `receive` (reading an upload) is timed by the route. */
export type Stage = 'receive' | 'inspect' | 'fetch' | 'cache' | 'prepare' | 'queue' | 'model' | 'charge'

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
   * Charges one credit of `period`, ends the credit hold `holdId` and records the answer in one
   * transaction; `result` is built from the period's charged count after the charge. Returns that count,
   * or null when the account is gone.
   */
  charged(period: string, result: (used: number) => AltTextResult, holdId: number): Promise<number | null>
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
}

/** Runs work that counts a failure in the account's daily history; a client that hung up did not fail, it left. */
export function countFailures(history: HistoryRecorder, clock: () => number) {
  /** `retried`: an error after which the caller tries again (not a failure of the request). */
  return async <T>(caller: Caller, work: () => Promise<T>, uploadDone?: () => void, retried?: (error: unknown) => boolean): Promise<T> => {
    try {
      return await work()
    } catch (error) {
      if (!(error instanceof ClientClosedError) && !retried?.(error)) history.record({ accountId: caller.account.id, at: clock(), outcome: 'failed' })
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

/** Everything that changes the answer: the image bytes, the model and the request's normal form. */
export function cacheKey(imageHash: string, model: string, input: PromptInput): string {
  const parts: unknown[] = [CACHE_FORMAT, imageHash, model, input.language, input.style, input.maxLength, input.context, input.keywords]
  // Appended only when asked, so the keys of every other request stay those of entries cached before.
  if (input.detectDecorative) parts.push('detect_decorative')
  if (input.longDescription) parts.push('long_description')
  return sha256Hex(JSON.stringify(parts))
}

/**
 * The key of an account's own entry (scope `account`): its id is part of the key, so neither a cached
 * answer nor a generation under way is shared with another account, which would get it free and learn
 * that someone described the image. `null` (scope `shared`): the key as it is.
 */
function scopedCacheKey(key: string, accountId: number | null): string {
  return accountId === null ? key : sha256Hex(JSON.stringify([key, 'account', accountId]))
}

/** Tokens for `maxLength` characters with room to spare: about 3 characters a token, more for other scripts. */
export const maxTokensFor = (maxLength: number) => Math.ceil(maxLength / 2) + 48

/** A structured answer's tokens: the alt text's, as many again for the text the image shows, and the JSON around them. */
const structuredMaxTokensFor = (maxLength: number) => 2 * maxTokensFor(maxLength) + 32

/** Room for a long description too, when one is asked for. */
const longTokens = (input: PromptInput) => (input.longDescription ? maxTokensFor(MAX_LONG_DESCRIPTION_CHARS) : 0)

/**
 * What the model made of an image, read from one answer: an alt text, or (when asked to judge) why the
 * image is decorative; with the text the image shows, when a structured answer said it.
 */
type Reply = ({ text: string; longDescription: string | null; wrongLanguage?: true } | { decorative: string }) & { textInImage: string | null }

/**
 * A plain-text answer: the decorative marker (when asked to judge) or the cleaned alt text, with the
 * long description after its marker when one was asked for; null when nothing usable is left.
 */
function readPlain(raw: string, input: PromptInput): Reply | null {
  const reason = input.detectDecorative ? decorativeReason(raw) : null
  if (reason !== null) return { decorative: reason, textInImage: null }
  const parts = input.longDescription ? splitPlainAnswer(raw) : { alt: raw, long: null }
  const text = cleanAltText(parts.alt, input.language)
  return text ? { text, longDescription: cleanLongDescription(parts.long, input.language, text), textInImage: null } : null
}

/**
 * A structured answer: the schema's JSON, or failing that its alt text when that is clearly there. The
 * decorative fields count only when the request asked for the judgement. Null when nothing usable is left.
 */
function readStructured(content: string, input: PromptInput): Reply | null {
  const answer = parseStructuredAnswer(content, input.longDescription)
  if (!answer) {
    // A broken answer's long description (the last field, so the one cut off) is not to be trusted.
    const salvaged = salvageAltText(content)
    const text = salvaged === null ? '' : cleanAltText(salvaged, input.language)
    return text ? { text, longDescription: null, textInImage: null } : null
  }
  const textInImage = normaliseTextInImage(answer.text_in_image)
  if (input.detectDecorative) {
    // The reason is bounded and cleaned as a plain answer's would be; a marker written into alt_text counts too.
    if (answer.decorative) return { decorative: decorativeReason(`${DECORATIVE_MARKER} ${answer.decorative_reason ?? ''}`) ?? '', textInImage }
    const marked = decorativeReason(answer.alt_text)
    if (marked !== null) return { decorative: marked, textInImage }
  }
  const text = cleanAltText(answer.alt_text, input.language)
  const longDescription = input.longDescription ? cleanLongDescription(answer.long_description ?? null, input.language, text) : null
  return text ? { text, longDescription, textInImage } : null
}

/** One request on its way: who asked, its signals, its deadline and its stage timer. */
type Run = {
  caller: Caller
  /** The client's signal alone: it aborts when the client hangs up. */
  clientSignal: AbortSignal
  /** Aborts when the client hangs up or the deadline passes, whichever comes first. */
  signal: AbortSignal
  /** On the monotonic clock (performance.now()); `clock` is business time (periods, expiry, cache age). */
  deadline: number
  startedAt: number
  timer: ReturnType<typeof stageTimer>
  source: ImageSource
  /** Frees the upload's place: once it is prepared, or when this request needs its bytes no more. */
  uploadDone: () => void
  /** A batch item: its answer's recorder and its two-part deadline (see generateItem). */
  item?: { record: ItemRecorder; deadline: ItemDeadline }
  /** The request asked for long_description: its answer carries the field, null or not. */
  longDescription: boolean
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

/** Whether the client, not the deadline, ended the request. */
const clientGone = (run: Run) => run.clientSignal.aborted && run.signal.reason === run.clientSignal.reason

export function createAltTextService(deps: AltTextDeps): AltTextService {
  const { intake, model, credits, cache, queue, history, logger, clock } = deps
  /** Generations under way, by cache key: identical requests wait for the one there is. */
  const inflight = new Map<string, Promise<CachedAltText>>()

  const modelFailure = (error: unknown, run: Run): unknown => {
    const context = { account_id: run.caller.account.id, model: model.model }
    if (run.signal.aborted) {
      logger.warn('model call aborted at the deadline', { ...context, deadline_ms: deps.deadlineMs })
      return new ApiError('upstream_timeout', `the model did not answer within ${deps.deadlineMs / 1000} seconds; nothing was charged`)
    }
    if (error instanceof ModelError) {
      logger.error('model call failed', { ...context, failure: error.kind, detail: error.message, upstream_status: error.status })
      const what =
        error.kind === 'unreachable'
          ? 'the model server is unreachable'
          : error.kind === 'model_not_found'
            ? 'the model is not installed on the model server'
            : error.kind === 'too_large'
              ? "the model server's answer was over the size limit"
              : 'the model server failed'
      return new ApiError('upstream_error', `${what}; nothing was charged, retry later (the operator log has details)`)
    }
    return error
  }

  /**
   * What a failed stage tells the client. A hang-up is a ClientClosedError whatever the stage threw; an
   * ApiError (a refusal, or the intake or queue saying it is overloaded) or a busy database stands; the model call's
   * failures are 502, or 504 when that call ran out of time; a deadline passing in any other stage is
   * 503 overloaded, never "the model did not answer".
   */
  const failure = (error: unknown, stage: Stage, run: Run): unknown => {
    if (clientGone(run)) return new ClientClosedError(stage)
    if (error instanceof ApiError || error instanceof ClientClosedError || error instanceof StoreBusyError) return error
    if (stage === 'model') return modelFailure(error, run)
    if (run.signal.aborted) {
      return new ApiError('overloaded', `the deadline of this request passed in stage ${stage}, before the model was asked; nothing was charged`, {
        retryAfterSeconds: 5,
      })
    }
    return error
  }

  /** An answer longer than any real one was read only up to MAX_MODEL_ANSWER_CHARS. */
  const logAnswerCut = (length: number) =>
    logger.warn('the model answer was cut before reading it', { model: model.model, characters: length, kept: MAX_MODEL_ANSWER_CHARS })

  /** Runs one stage: timed, and its failure told truthfully (see `failure`). */
  const step = async <T>(run: Run, stage: Stage, work: () => Promise<T>): Promise<T> => {
    try {
      return await run.timer.time(stage, work)
    } catch (error) {
      throw failure(error, stage, run)
    }
  }

  /**
   * The model's answer: clean alt text within `maxLength` that keeps the text the image shows where it
   * fits, or (when asked to judge) why the image is decorative. Asked structured where the server
   * allows (see structureFallback); a structured answer with nothing usable is asked again once in
   * plain text. Every call here is part of one generation: the credit held around it is charged once.
   */
  const describe = async (image: PreparedImage, input: PromptInput, run: Run): Promise<Reply> => {
    const plain = (prompt: Prompt) =>
      model.describe({ image, system: prompt.system, prompt: prompt.user, maxTokens: maxTokensFor(input.maxLength) + longTokens(input), signal: run.signal })
    const ask = async (prompt: Prompt) => cleanAltText((await plain(prompt)).content, input.language)
    const junk = junkCheck(input)
    /** A reply whose text is junk ("AAAA…", our prompt, a bare URL) has nothing usable, as an empty one. */
    const usable = (reply: Reply | null): Reply | null => {
      const kind = reply && 'text' in reply ? junk(reply.text) : null
      if (kind) logger.warn('the model answered no alt text', { model: model.model, junk: kind })
      return kind ? null : reply
    }
    const prompt = buildPrompt(input)
    const json = buildPrompt(input, true)
    const first = await model.describe({
      image,
      system: prompt.system,
      prompt: prompt.user,
      maxTokens: maxTokensFor(input.maxLength) + longTokens(input),
      signal: run.signal,
      structured: {
        schema: input.longDescription ? LONG_ANSWER_SCHEMA : ANSWER_SCHEMA,
        system: json.system,
        prompt: json.user,
        maxTokens: structuredMaxTokensFor(input.maxLength) + longTokens(input),
      },
    })
    if (first.structureRefused) {
      logger.warn('the model server refused structured answers; asking it in plain text from now on', { model: model.model, detail: first.structureRefused })
    }
    if (first.cutFrom) logAnswerCut(first.cutFrom)
    let reply = usable(first.structured ? readStructured(first.content, input) : readPlain(first.content, input))
    if (reply === null && first.structured) {
      logger.warn('the structured answer held no usable alt text; asking once in plain text', { model: model.model })
      reply = usable(readPlain((await plain(prompt)).content, input))
    }
    // A reply with nothing left after cleaning (only markup, control characters, emoji or a label), or
    // junk, is a failed call: 502 upstream_error, nothing charged. Markup residue in usable text is a WCAG issue.
    if (reply === null) throw new ModelError('malformed', `model ${model.model} returned no usable text`)
    if ('decorative' in reply) return reply
    let { text } = reply
    if (characterCount(text) > input.maxLength && run.deadline - performance.now() > queue.stats().averageMs * 1.2) {
      // One more try for a text that fits, while the deadline allows; else cut at a boundary.
      const shorter = await ask(buildShortenPrompt(input, text)).catch((error: unknown) => {
        if (run.signal.aborted) throw error
        logger.warn('shortening call failed; cutting the first answer', { error: error instanceof Error ? error.message : String(error) })
        return ''
      })
      if (shorter && characterCount(shorter) <= input.maxLength && !junk(shorter)) text = shorter
    }
    const fitted = characterCount(text) > input.maxLength ? fitToLength(text, input.maxLength, input.language) : text
    const final = keepTextInImage(fitted, reply.textInImage, input.maxLength, input.language)
    return { ...(await inLanguage(final, reply.textInImage, input, run)), longDescription: reply.longDescription, textInImage: reply.textInImage }
  }

  /**
   * The alt text in the language asked for. One clearly in another is sent back to the same model once,
   * as text only (no image), to be translated: part of the same generation, so no extra credit. Marked
   * `wrongLanguage` when the translation is not in that language either, or there was no time for it.
   */
  const inLanguage = async (text: string, textInImage: string | null, input: PromptInput, run: Run): Promise<{ text: string; wrongLanguage?: true }> => {
    if (!notInLanguage(text, input.language)) return { text }
    let translated = ''
    if (run.deadline - performance.now() > queue.stats().averageMs * 1.2) {
      const prompt = buildTranslatePrompt(input, text)
      translated = await model
        .describe({ system: prompt.system, prompt: prompt.user, maxTokens: maxTokensFor(input.maxLength), signal: run.signal })
        .then((answer) => cleanAltText(answer.content, input.language))
        .catch((error: unknown) => {
          if (run.signal.aborted) throw error
          logger.warn('translation call failed; keeping the first answer', { error: error instanceof Error ? error.message : String(error) })
          return ''
        })
    }
    if (translated && !junkCheck(input)(translated)) {
      const fitted = characterCount(translated) > input.maxLength ? fitToLength(translated, input.maxLength, input.language) : translated
      const final = keepTextInImage(fitted, textInImage, input.maxLength, input.language)
      if (!notInLanguage(final, input.language)) {
        deps.onLanguageRetry?.('translated')
        return { text: final }
      }
    }
    deps.onLanguageRetry?.('still_wrong')
    logger.warn('the alt text is not in the language asked for', { model: model.model, language: input.language })
    return { text, wrongLanguage: true }
  }

  /** The work for one cache key, done once however many identical requests wait for it; fails as `failure` says. */
  const produce = async (image: FetchedImage, input: PromptInput, key: string, run: Run): Promise<CachedAltText> => {
    const owner = run.caller.account.id
    let prepared: PreparedImage
    try {
      prepared = await step(run, 'prepare', () => intake.prepare(image, run.signal, owner))
    } finally {
      run.uploadDone()
    }
    const item = run.item
    item?.deadline.pause()
    const slot = await step(run, 'queue', () => (item ? queue.acquireBackground(run.signal) : queue.acquire(run.deadline, run.signal)))
    item?.deadline.restart(run)
    let answer: Awaited<ReturnType<typeof describe>>
    try {
      answer = await step(run, 'model', () => describe(prepared, input, run))
    } finally {
      slot.release()
    }
    // A decorative image's alt text is empty, which is what WCAG asks of it (alt="").
    let wcag = 'text' in answer ? checkWcag(answer.text, input.maxLength, input.language, answer.textInImage) : { compliant: true, issues: [] }
    if ('text' in answer && answer.wrongLanguage) wcag = { compliant: false, issues: [...wcag.issues, wrongLanguageIssue(input.language)] }
    const entry: CachedAltText = {
      altText: 'text' in answer ? answer.text : '',
      decorativeReason: 'decorative' in answer ? answer.decorative : null,
      textInImage: answer.textInImage,
      longDescription: 'text' in answer ? answer.longDescription : null,
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
  }

  const respond = (entry: CachedAltText, cached: boolean, creditsRemaining: number, run: Run): AltTextResult => {
    const count = characterCount(entry.altText)
    return {
      alt_text: entry.altText,
      credits_remaining: creditsRemaining,
      wcag_compliant: entry.wcagCompliant,
      character_count: count,
      processing_time_ms: Math.round(performance.now() - run.startedAt),
      length: count,
      language: entry.language,
      cached,
      wcag_issues: entry.wcagIssues,
      model: entry.model,
      image: { width: entry.width, height: entry.height, format: entry.format },
      decorative: entry.decorativeReason != null,
      decorative_reason: entry.decorativeReason ?? null,
      text_in_image: entry.textInImage ?? null,
      source: run.source,
      ...(run.longDescription && { long_description: entry.longDescription ?? null }),
    }
  }

  /** An answer someone else paid for (the cache, or a generation shared with an identical request): free. */
  const respondFree = async (entry: CachedAltText, run: Run): Promise<AltTextResult> => {
    const balance = await credits.balance(run.caller.account, clock())
    return respond(entry, true, balance.remaining, run)
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

  /**
   * The generation for `key`: an identical request's under way (free, see `following`), or one this
   * request leads, for which a credit is held and charged only when the answer can be sent.
   */
  const generateShared = async (image: FetchedImage, input: PromptInput, key: string, run: Run): Promise<AltTextResult> => {
    // A flight is registered before its first await, so an identical request arriving meanwhile follows
    // it instead of starting (and paying for) a second model call.
    let hold: CreditHold | undefined
    let flight: { value: CachedAltText; led: boolean }
    try {
      flight = await shareFlight(
        inflight,
        key,
        async () => {
          hold = await credits.reserve(run.caller.account, clock(), run.item?.record.itemId)
          return produce(image, input, key, run)
        },
        following(run),
      )
    } catch (error) {
      await hold?.release()
      throw error
    }
    const entry = flight.value
    if (!flight.led) return respondFree(entry, run)
    const held = hold
    if (!held) throw new Error('a generation ended without its credit hold')
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
      ((period: string, total: number, holdId: number) => record.charged(period, (used) => respond(entry, false, Math.max(0, total - used), run), holdId))
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
    return respond(entry, false, remaining, run)
  }

  /** The image, checked: the upload that came with the request, or the one fetched from its URL. */
  const obtain = (request: AltTextInput, run: Run): Promise<FetchedImage> => {
    const owner = run.caller.account.id
    const { upload, image_url: url } = request
    if (upload) return step(run, 'inspect', () => intake.accept(upload, run.signal, owner))
    // The route lets no request through without exactly one source; this keeps the service honest alone.
    if (!url) throw new ApiError('invalid_request', 'send exactly one image source: image_url, image_base64, or a multipart file in the field image')
    return step(run, 'fetch', () => intake.fetch(url, run.signal, owner))
  }

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
      return await generateRun(request, run)
    } finally {
      deadline?.clear()
    }
  }

  const generateRun = async (request: AltTextInput, run: Run): Promise<AltTextResult> => {
    const { caller, source } = run

    // The balance comes first: with no credit left the answer is 429 without fetching the image, even
    // when it would be a (free) cache hit, which only the image bytes could tell.
    await credits.requireCredit(caller.account, clock())
    const image = await obtain(request, run)
    const input = promptInput(request)
    const key = scopedCacheKey(cacheKey(image.contentHash, model.model, input), deps.cacheScope === 'account' ? caller.account.id : null)

    const result = await answer(image, input, key, run)
    // A fresh answer was recorded with its charge; a free one is recorded here.
    if (run.item && result.cached) await run.item.record.free(result)
    history.record({
      accountId: caller.account.id,
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
    return result
  }

  /** The cache's answer, an identical request's, or a fresh generation. */
  const answer = async (image: FetchedImage, input: PromptInput, key: string, run: Run): Promise<AltTextResult> => {
    const hit = await step(run, 'cache', () => cache.get(key, clock()))
    if (hit) return respondFree(hit, run)
    return generateShared(image, input, key, run)
  }

  const counted = countFailures(history, clock)

  return {
    requireCredit: (caller) => counted(caller, async () => void (await credits.requireCredit(caller.account, clock()))),
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
