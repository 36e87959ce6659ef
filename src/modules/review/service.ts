// The judge of existing alt text: the image as the alt-text route takes it (fetched with the same
// SSRF-safe intake, or uploaded), one model call for a verdict, one credit held around it and charged
// only when the verdict can be sent, released on any failure. Verdicts are cached like alt texts (same
// table, same ALTTEXT_CACHE_SCOPE, their own keys), and a cached verdict is free.
import type { CreditHold } from '../../credits/service'
import type { FetchedImage, ImageSource, PreparedImage } from '../../intake'
import { callBudget, ModelError } from '../../model-provider/provider'
import { sha256Hex } from '../../shared/crypto'
import { MAX_MODEL_ANSWER_CHARS, MAX_REVIEW_MODEL_CALLS, MAX_REVIEW_MODEL_MS } from '../../shared/limits'
import { shareFlight } from '../../shared/flight'
import { ApiError, ClientClosedError } from '../../shared/errors'
import { StoreBusyError } from '../../store/contract'
import type { CachedAltText } from '../../store/contract'
import { type Reading, readImageText, type SeenText } from '../alt-text/image-text'
import { promptInput, type PromptInput } from '../alt-text/prompt'
import { maxTokensFor } from '../alt-text/conversation'
import { type AltTextDeps, countFailures } from '../alt-text/service'
import type { ImageRequest } from '../alt-text/upload'
import type { Caller } from '../auth/service'
import { type ReviewRequest, type ReviewResult, type Verdict, VERDICTS } from './model'
import { buildReviewPrompt, type Judgement, normalAltText, readJudgement, VERDICT_SCHEMA, withImageTextVerdict } from './verdict'

export type ReviewInput = ImageRequest<ReviewRequest>

export interface ReviewService {
  /** Throws 429 quota_exceeded when the caller has no credit left: the route asks before it reads an upload. */
  requireCredit(caller: Caller): Promise<void>
  uploadPlace(caller: Caller, signal: AbortSignal): Promise<() => void>
  review(caller: Caller, input: ReviewInput, signal: AbortSignal): Promise<ReviewResult>
}

/** The judge runs on the alt-text route's parts: the same intake, credits, cache (its own keys), queue and model. */
export type ReviewDeps = Omit<AltTextDeps, 'onLanguageRetry'> & {
  /** The model time one review may use, all its calls together (MAX_REVIEW_MODEL_MS; tests shorten it). */
  modelBudgetMs?: number
}

/** Part of every verdict's key, so no verdict key can ever equal an alt text's; raised when judging changes. */
const REVIEW_CACHE_FORMAT = 'review-2'

/** Everything that changes the verdict: the image, the alt text judged, the model, the options, and whether the OCR reads the image. */
export function reviewCacheKey(imageHash: string, model: string, altText: string, input: PromptInput, accountId: number | null, ocr = false): string {
  const parts: unknown[] = [REVIEW_CACHE_FORMAT, imageHash, model, altText, input.language, input.style, input.maxLength, input.context, input.keywords]
  if (accountId !== null) parts.push('account', accountId)
  if (ocr) parts.push('ocr')
  return sha256Hex(JSON.stringify(parts))
}

/**
 * A verdict in the alt-text cache's row: the suggestion in alt_text, the verdict in decorative_reason
 * (a column no verdict key shares with an alt text's), the reasons as wcag_issues' one entry.
 */
function toEntry(judgement: Judgement, image: FetchedImage, language: string, model: string): CachedAltText {
  return {
    altText: judgement.suggested ?? '',
    decorativeReason: judgement.verdict,
    textInImage: null,
    wcagCompliant: judgement.verdict === 'ok',
    wcagIssues: [judgement.reasons],
    language,
    model,
    width: image.width,
    height: image.height,
    format: image.format,
  }
}

function fromEntry(entry: CachedAltText): Judgement | null {
  const verdict = entry.decorativeReason
  if (!verdict || !(VERDICTS as readonly string[]).includes(verdict)) return null
  const suggested = verdict === 'ok' ? null : verdict === 'decorative' ? '' : entry.altText
  return { verdict: verdict as Verdict, reasons: entry.wcagIssues[0] ?? '', suggested }
}

/** One review on its way: who asked, its signals, its deadline (on performance.now()) and its image's source. */
type ReviewRun = {
  caller: Caller
  owner: number
  /** The client's signal alone: it aborts when the client hangs up. */
  clientSignal: AbortSignal
  /** Aborts when the client hangs up or the deadline passes, whichever comes first. */
  signal: AbortSignal
  deadline: number
  startedAt: number
  source: ImageSource
  /** Frees the upload's place: the bytes are needed no more. */
  uploadDone: () => void
}

/** What is judged: the image, the request's options, and the alt text in its normal form. */
type Subject = { image: FetchedImage; input: PromptInput; altText: string }

export function createReviewService(deps: ReviewDeps): ReviewService {
  const { intake, model, credits, cache, queue, history, logger, clock } = deps
  /** Reviews under way, by cache key: identical requests wait for the one there is. */
  const inflight = new Map<string, Promise<Judgement>>()

  /** What a failure tells the client: refusals stand; the model's failures are 502, or 504 at the deadline. */
  const failure = (error: unknown, signal: AbortSignal, clientSignal: AbortSignal, stage: string): unknown => {
    if (clientSignal.aborted) return new ClientClosedError('model')
    if (error instanceof ApiError || error instanceof ClientClosedError || error instanceof StoreBusyError) return error
    if (signal.aborted) {
      return stage === 'model'
        ? new ApiError('upstream_timeout', `the model did not answer within ${deps.deadlineMs / 1000} seconds; nothing was charged`)
        : new ApiError('overloaded', `the deadline of this request passed in stage ${stage}, before the model was asked; nothing was charged`, {
            retryAfterSeconds: 5,
          })
    }
    if (error instanceof ModelError) {
      logger.error('review model call failed', { model: model.model, failure: error.kind, detail: error.message, upstream_status: error.status })
      const what = error.kind === 'malformed' ? 'the model gave no verdict' : 'the model server failed'
      return new ApiError('upstream_error', `${what}; nothing was charged, retry later (the operator log has details)`)
    }
    return error
  }

  /** Runs one stage of `run`, its failure told as `failure` says. */
  const step = async <T>(run: ReviewRun, stage: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work()
    } catch (error) {
      throw failure(error, run.signal, run.clientSignal, stage)
    }
  }

  /** The steps of a review, in order: credit check, image, cache, verdict (shared or led), charge. */
  const review = async (caller: Caller, request: ReviewInput, clientSignal: AbortSignal): Promise<ReviewResult> => {
    const startedAt = performance.now()
    const run: ReviewRun = {
      caller,
      owner: caller.account.id,
      clientSignal,
      signal: AbortSignal.any([clientSignal, AbortSignal.timeout(deps.deadlineMs)]),
      deadline: startedAt + deps.deadlineMs,
      startedAt,
      source: request.upload ? 'upload' : 'url',
      uploadDone: () => request.uploadPlace?.(),
    }
    await credits.requireCredit(caller.org.account, clock())
    const image = await obtainImage(request, run)
    const subject: Subject = { image, input: promptInput(request), altText: normalAltText(request.alt_text) }
    const key = reviewCacheKey(
      image.contentHash,
      model.model,
      subject.altText,
      subject.input,
      deps.cacheScope === 'account' ? run.caller.org.id : null,
      Boolean(deps.textReader),
    )
    const known = await lookUpCache(key, run)
    if (known) {
      run.uploadDone()
      return respond(known, true, (await credits.balance(caller.org.account, clock())).remaining, subject, run)
    }
    return judgeShared(key, subject, run)
  }

  /** The image, checked: the upload that came with the request, or the one fetched from its URL. */
  const obtainImage = (request: ReviewInput, run: ReviewRun): Promise<FetchedImage> => {
    const { upload, image_url: url } = request
    if (!upload && !url) throw new ApiError('invalid_request', 'send exactly one image source: image_url, image_base64, or a multipart file in the field image')
    return step(run, upload ? 'inspect' : 'fetch', () =>
      upload ? intake.accept(upload, run.signal, run.owner) : intake.fetch(url ?? '', run.signal, run.owner),
    )
  }

  /** The cached verdict, when there is one (an entry that holds none counts as none). */
  const lookUpCache = async (key: string, run: ReviewRun): Promise<Judgement | null> => {
    const hit = await step(run, 'cache', () => cache.get(key, clock()))
    return (hit && fromEntry(hit)) || null
  }

  /**
   * The verdict of an identical review under way is shared, as its failure is: while the model fails,
   * identical reviews waiting together cost one failed call. Only the leader's client hanging up or its
   * having no credit sends them on, to one new call that the first of them leads.
   */
  const judgeShared = async (key: string, subject: Subject, run: ReviewRun): Promise<ReviewResult> => {
    let hold: CreditHold | undefined
    let flight: { value: Judgement; led: boolean }
    try {
      flight = await shareFlight(
        inflight,
        key,
        async () => {
          hold = await credits.reserve(run.caller.org.account, clock())
          const { judged, read } = await judge(subject, run)
          const now = clock()
          // A verdict made without the reading the OCR failed to give is not kept (as an alt text's).
          if (!deps.textReader || read !== null)
            await cache.put(key, toEntry(judged, subject.image, subject.input.language, model.model), now, now + deps.cacheTtlMs)
          return judged
        },
        {
          signal: run.clientSignal,
          gone: () => new ClientClosedError('model'),
          personal: (error) => error instanceof ClientClosedError || (error instanceof ApiError && error.code === 'quota_exceeded'),
          onFollow: () => {
            run.uploadDone()
            logger.info('waiting for an identical review under way', { account_id: run.owner, model: model.model })
          },
        },
      )
    } catch (error) {
      await hold?.release()
      throw error
    } finally {
      run.uploadDone()
    }
    const judgement = flight.value
    if (!flight.led) return respond(judgement, true, (await credits.balance(run.caller.org.account, clock())).remaining, subject, run)
    if (!hold) throw new Error('a review ended without its credit hold')
    return chargeAndRespond(judgement, hold, subject, run)
  }

  /**
   * One model call for the verdict, in its stages: the image prepared, its text read by the OCR while
   * a model slot is awaited, the call; the verdict then weighed against that text (withImageTextVerdict).
   */
  const judge = async ({ image, input, altText }: Subject, run: ReviewRun): Promise<{ judged: Judgement; read: Reading | null }> => {
    const prepared = await step(run, 'prepare', () => intake.prepare(image, run.signal, run.owner))
    const ocrStop = new AbortController()
    const reading = readImageText(deps.textReader, prepared, AbortSignal.any([run.signal, ocrStop.signal]), logger)
    try {
      const slot = await step(run, 'queue', () => queue.acquire(run.deadline, run.signal))
      try {
        const read = await reading
        const seen = read?.seen ?? null
        const judgement = await step(run, 'model', () => ask(prepared, input, altText, seen, run.signal))
        return { judged: withImageTextVerdict(judgement, altText, seen, input), read }
      } finally {
        slot.release()
      }
    } finally {
      ocrStop.abort()
    }
  }

  const modelBudgetMs = deps.modelBudgetMs ?? MAX_REVIEW_MODEL_MS

  /**
   * The model's verdict, within the work one credit buys: MAX_REVIEW_MODEL_CALLS calls (retries on
   * another host or in plain text included) and `modelBudgetMs` of model time for them together.
   */
  const ask = async (prepared: PreparedImage, input: PromptInput, altText: string, seen: SeenText | null, signal: AbortSignal): Promise<Judgement> => {
    const plain = buildReviewPrompt(input, altText, false, seen)
    const json = buildReviewPrompt(input, altText, true, seen)
    // The suggestion's tokens, and room for the verdict, the reasons and the labels or JSON around them.
    const maxTokens = maxTokensFor(input.maxLength) + 96
    const budget = AbortSignal.timeout(modelBudgetMs)
    const answer = await model
      .describe({
        image: prepared,
        system: plain.system,
        prompt: plain.user,
        maxTokens,
        signal: AbortSignal.any([signal, budget]),
        structured: { schema: VERDICT_SCHEMA, system: json.system, prompt: json.user, maxTokens },
        calls: callBudget(MAX_REVIEW_MODEL_CALLS),
      })
      .catch((error: unknown) => {
        if (!budget.aborted || signal.aborted) throw error
        throw new ApiError(
          'upstream_timeout',
          `the model did not answer within the ${modelBudgetMs / 1000} seconds of model time a review may use; nothing was charged`,
        )
      })
    if (answer.cutFrom) {
      logger.warn('the model answer was cut before reading it', { model: model.model, characters: answer.cutFrom, kept: MAX_MODEL_ANSWER_CHARS })
    }
    const judgement = readJudgement(answer.content, input)
    if (!judgement) throw new ModelError('malformed', `model ${model.model} answered no verdict of the four`)
    return judgement
  }

  /** The led review's answer: its held credit charged, unless the client is gone and it is not answered. */
  const chargeAndRespond = async (judgement: Judgement, hold: CreditHold, subject: Subject, run: ReviewRun): Promise<ReviewResult> => {
    if (run.clientSignal.aborted) {
      // Not answered, so not charged; the verdict stays cached for the next request.
      await hold.release()
      throw new ClientClosedError('charge')
    }
    const remaining = await hold.commit()
    logger.info('alt text reviewed', {
      account_id: run.owner,
      model: model.model,
      verdict: judgement.verdict,
      source: run.source,
      ms: Math.round(performance.now() - run.startedAt),
    })
    return respond(judgement, false, remaining, subject, run)
  }

  /** The verdict in the account's history, and the response body. */
  const respond = (judgement: Judgement, cached: boolean, remaining: number, { image, input, altText }: Subject, run: ReviewRun): ReviewResult => {
    history.record({
      accountId: run.caller.org.id,
      at: clock(),
      outcome: cached ? 'cached' : 'generated',
      entry: {
        source: run.source,
        format: image.format,
        bytes: image.bytes.byteLength,
        width: image.width,
        height: image.height,
        // The alt text the verdict leaves the image with: the suggestion, or the one judged ok.
        altText: judgement.suggested ?? altText,
        decorative: judgement.verdict === 'decorative',
        language: input.language,
        style: input.style,
        maxLength: input.maxLength,
        characterCount: Array.from(judgement.suggested ?? altText).length,
      },
    })
    return {
      verdict: judgement.verdict,
      reasons: judgement.reasons,
      suggested_alt_text: judgement.suggested,
      credits_remaining: remaining,
      cached,
      language: input.language,
      model: model.model,
      processing_time_ms: Math.round(performance.now() - run.startedAt),
      image: { width: image.width, height: image.height, format: image.format },
      source: run.source,
    }
  }

  const counted = countFailures(history, clock)

  return {
    requireCredit: (caller) => counted(caller, async () => void (await credits.requireCredit(caller.org.account, clock()))),
    uploadPlace: (caller, signal) => intake.uploadPlace(signal, caller.account.id),
    review: (caller, input, signal) => counted(caller, () => review(caller, input, signal), input.uploadPlace),
  }
}
