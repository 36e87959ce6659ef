// The conversation with the model about one image: asked for a structured answer where the server
// allows it and once more in plain text when that held nothing usable, again for a shorter text when it is
// too long, and for a translation when it is in another language than asked. All of it is one generation.
import type { PreparedImage } from '../../intake'
import { ModelError, type ModelProvider } from '../../model-provider/provider'
import { MAX_LONG_DESCRIPTION_CHARS, MAX_MODEL_ANSWER_CHARS } from '../../shared/limits'
import type { Logger } from '../../shared/logger'
import { buildQuoteFixPrompt, type Reading, type SeenText, unshownQuotes, withShownText, withTextAppendix } from './image-text'
import { junkCheck } from './junk'
import { type LanguageRetryOutcome, notInLanguage } from './language'
import { cleanLongDescription, splitPlainAnswer } from './long-description'
import { buildPrompt, buildShortenPrompt, buildTranslatePrompt, DECORATIVE_MARKER, decorativeReason, type Prompt, type PromptInput } from './prompt'
import type { GenerationQueue } from './queue'
import { ANSWER_SCHEMA, keepTextInImage, LONG_ANSWER_SCHEMA, normaliseTextInImage, parseStructuredAnswer, salvageAltText } from './structured'
import { characterCount, cleanAltText, fitToLength } from './text'
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
export type Reply = ({ text: string; longDescription: string | null; wrongLanguage?: true } | { decorative: string }) & {
  textInImage: string | null
  /** The OCR ran: what it read (then textInImage is its text, null when it read none). */
  reading?: Reading
}

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

/** A request's part in the conversation: its signal, and its deadline on performance.now(), read when asked (a batch item's moves). */
export type Turn = { signal: AbortSignal; deadline: number }

export type ConversationDeps = {
  model: ModelProvider
  queue: GenerationQueue
  logger: Logger
  /** Told of each answer that was not in the language asked for: translated, or still not in it. */
  onLanguageRetry?: (outcome: LanguageRetryOutcome) => void
}

export function createConversation(deps: ConversationDeps) {
  const { model, queue, logger } = deps

  /** Whether the deadline leaves room for one more call, by the queue's average. */
  const timeForAnotherCall = (run: Turn) => run.deadline - performance.now() > queue.stats().averageMs * 1.2

  /** An answer longer than any real one was read only up to MAX_MODEL_ANSWER_CHARS. */
  const logAnswerCut = (length: number) =>
    logger.warn('the model answer was cut before reading it', { model: model.model, characters: length, kept: MAX_MODEL_ANSWER_CHARS })

  /**
   * The model's answer: clean alt text within `maxLength` that keeps the text the image shows where it
   * fits, or (when asked to judge) why the image is decorative. Asked structured where the server
   * allows (see structureFallback); a structured answer with nothing usable is asked again once in
   * plain text. Every call here is part of one generation: the credit held around it is charged once.
   */
  const describe = async (image: PreparedImage, input: PromptInput, run: Turn, reading: Reading | null = null): Promise<Reply> => {
    const reply = await describeImage(image, input, run, reading)
    // With the OCR, text_in_image is what it read (null: none), whatever the model said.
    return reading ? { ...reply, textInImage: reading.seen?.text ?? null, reading } : reply
  }

  const describeImage = async (image: PreparedImage, input: PromptInput, run: Turn, reading: Reading | null): Promise<Reply> => {
    const seen = reading?.seen ?? null
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
    const prompt = buildPrompt(input, false, { keyFrames: image.keyFrames, text: seen })
    const json = buildPrompt(input, true, { keyFrames: image.keyFrames, text: seen })
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
    if (characterCount(text) > input.maxLength && timeForAnotherCall(run)) {
      // One more try for a text that fits, while the deadline allows; else cut at a boundary.
      const shorter = await ask(buildShortenPrompt(input, text)).catch((error: unknown) => {
        if (run.signal.aborted) throw error
        logger.warn('shortening call failed; cutting the first answer', { error: error instanceof Error ? error.message : String(error) })
        return ''
      })
      if (shorter && characterCount(shorter) <= input.maxLength && !junk(shorter)) text = shorter
    }
    const fit = (value: string) => (characterCount(value) > input.maxLength ? fitToLength(value, input.maxLength, input.language) : value)
    if (reading === null) {
      const keep = (value: string) => keepTextInImage(value, reply.textInImage, input.maxLength, input.language)
      return { ...(await inLanguage(keep(fit(text)), keep, input, run)), longDescription: reply.longDescription, textInImage: reply.textInImage }
    }
    // The OCR read no text: the model's claim of some is not kept in the alt text.
    if (seen === null) return { ...(await inLanguage(fit(text), (value) => value, input, run)), longDescription: reply.longDescription, textInImage: null }
    // With the OCR's text: quotes checked against it, an image of text given its text, a long description its labels.
    const quoted = await withTrueQuotes(fit(text), seen, input, run, fit)
    // The text that did not fit into the alt text last kept (the translation's, when there was one).
    const last: { overflow: string | null } = { overflow: null }
    const keep = (value: string) => {
      if (!seen.mostlyText) return value
      const shown = withShownText(value, seen, input.maxLength, input.language)
      last.overflow = shown.overflow
      return shown.altText
    }
    const final = await inLanguage(keep(quoted), keep, input, run)
    let longDescription = reply.longDescription
    if (input.longDescription && last.overflow !== null) longDescription = withTextAppendix(longDescription, [last.overflow], input.language)
    else if (longDescription !== null) longDescription = withTextAppendix(longDescription, seen.lines, input.language)
    return { ...final, longDescription, textInImage: reply.textInImage }
  }

  /**
   * The alt text with no quote of words the image does not show: one that quotes such words is sent back
   * to the same model once, as text only with the OCR text, to be corrected (part of the same
   * generation). When the correction still quotes wrongly, or there was no time for it, the first stands
   * and the WCAG check flags it.
   */
  const withTrueQuotes = async (text: string, seen: SeenText, input: PromptInput, run: Turn, fit: (value: string) => string): Promise<string> => {
    const callerText = [input.context ?? '', ...input.keywords]
    const wrong = unshownQuotes(text, seen, callerText)
    if (wrong.length === 0 || !timeForAnotherCall(run)) return text
    const prompt = buildQuoteFixPrompt(input, text, seen, wrong)
    const corrected = await model
      .describe({ system: prompt.system, prompt: prompt.user, maxTokens: maxTokensFor(input.maxLength), signal: run.signal })
      .then((answer) => cleanAltText(answer.content, input.language))
      .catch((error: unknown) => {
        if (run.signal.aborted) throw error
        logger.warn('quote correction call failed; keeping the first answer', { error: error instanceof Error ? error.message : String(error) })
        return ''
      })
    const fixed = corrected && !junkCheck(input)(corrected) ? fit(corrected) : ''
    const good = fixed !== '' && unshownQuotes(fixed, seen, callerText).length === 0
    logger.info('the alt text quoted text the image does not show; asked to correct it', { model: model.model, corrected: good })
    return good ? fixed : text
  }

  /**
   * The alt text in the language asked for. One clearly in another is sent back to the same model once,
   * as text only (no image), to be translated: part of the same generation, so no extra credit. Marked
   * `wrongLanguage` when the translation is not in that language either, or there was no time for it.
   */
  const inLanguage = async (text: string, keep: (text: string) => string, input: PromptInput, run: Turn): Promise<{ text: string; wrongLanguage?: true }> => {
    if (!notInLanguage(text, input.language)) return { text }
    let translated = ''
    if (timeForAnotherCall(run)) {
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
      const final = keep(fitted)
      if (!notInLanguage(final, input.language)) {
        deps.onLanguageRetry?.('translated')
        return { text: final }
      }
    }
    deps.onLanguageRetry?.('still_wrong')
    logger.warn('the alt text is not in the language asked for', { model: model.model, language: input.language })
    return { text, wrongLanguage: true }
  }

  /**
   * Another of a request's `languages`: the first language's alt text translated by the same model, text
   * only (no image), then checked and retried like any answer (see inLanguage). An answer with nothing
   * usable is a ModelError, as a failed call is: that language fails, the others stand.
   */
  const translate = async (source: string, textInImage: string | null, input: PromptInput, run: Turn): Promise<Reply> => {
    const prompt = buildTranslatePrompt(input, source)
    const answer = await model.describe({ system: prompt.system, prompt: prompt.user, maxTokens: maxTokensFor(input.maxLength), signal: run.signal })
    if (answer.cutFrom) logAnswerCut(answer.cutFrom)
    const text = cleanAltText(answer.content, input.language)
    if (!text || junkCheck(input)(text)) throw new ModelError('malformed', `model ${model.model} returned no usable translation`)
    const fitted = characterCount(text) > input.maxLength ? fitToLength(text, input.maxLength, input.language) : text
    const keep = (value: string) => keepTextInImage(value, textInImage, input.maxLength, input.language)
    return { ...(await inLanguage(keep(fitted), keep, input, run)), longDescription: null, textInImage }
  }

  return { describe, translate }
}
