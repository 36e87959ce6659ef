// The vision model behind a small interface: a second provider is a new file implementing it.
import { MAX_MODEL_ANSWER_CHARS } from '../shared/limits'

/** Why a health check failed, for a fix hint (`alttext doctor`). */
export type HealthProblem = 'unreachable' | 'model_missing' | 'no_vision' | 'failed'

/**
 * `detail` is for the operator (it may name the server's address); `publicDetail` says the same without
 * addresses or host names, for the public /ready body.
 */
export type ModelHealth = { ok: boolean; detail: string; publicDetail: string; problem?: HealthProblem }

/** The health problem a failed model call shows. */
export function healthProblem(failure: ModelError): HealthProblem {
  if (failure.kind === 'model_not_found') return 'model_missing'
  if (failure.kind === 'unreachable' || failure.kind === 'aborted') return 'unreachable'
  return 'failed'
}

/** A JSON schema for the answer; `name` is what OpenAI-compatible servers want with it. */
export type AnswerSchema = { name: string; schema: Record<string, unknown> }

export type DescribeRequest = {
  /** Absent for a text-only follow-up (a translation of an answer): no image is sent. */
  image?: { data: Uint8Array; mime: 'image/png' | 'image/jpeg' }
  /** The plain-text prompt: used when there is no `structured` one or the server refuses it. */
  system: string
  prompt: string
  /** Upper bound on generated tokens. */
  maxTokens: number
  /** Aborts the call (deadline passed or client gone); the provider must stop the upstream request. */
  signal: AbortSignal
  /** Ask for JSON following `schema`, with this prompt, where the server can constrain its output to it. */
  structured?: { schema: AnswerSchema; system: string; prompt: string; maxTokens: number }
  /** The calls this request may make, retries included; without it, retries are bounded only by their rules. */
  calls?: CallBudget
}

/** A number of model calls, shared by a request's first call and its retries (see `callBudget`). */
export type CallBudget = {
  /** Whether a call may start; if so, it is counted. */
  take(): boolean
  /** Whether another call could start. */
  left(): boolean
}

export function callBudget(calls: number): CallBudget {
  let remaining = calls
  return {
    take() {
      if (remaining <= 0) return false
      remaining--
      return true
    },
    left: () => remaining > 0,
  }
}

/** A request whose call budget is spent: no call was made. */
export function budgetSpent(): ModelError {
  return new ModelError('upstream', 'the model calls this request may make are used up')
}

export type DescribeAnswer = {
  /** At most MAX_MODEL_ANSWER_CHARS characters (see `boundedAnswer`). */
  content: string
  /** How long the answer was when it was cut to MAX_MODEL_ANSWER_CHARS (for the log); absent when it was not. */
  cutFrom?: number
  /** Asked with the schema: `content` should be its JSON. False for the plain-text prompt. */
  structured: boolean
  /** Set on the call that found out that this server refuses structured answers (for the log). */
  structureRefused?: string
}

/** `too_large`: the answer passed its byte cap (capped-fetch.ts) and was not read further. */
export type ModelFailure = 'unreachable' | 'model_not_found' | 'upstream' | 'malformed' | 'too_large' | 'aborted'

/** A failed model call. `message` is for the operator's log; clients get a generic 502/504. */
export class ModelError extends Error {
  constructor(
    readonly kind: ModelFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message)
    this.name = 'ModelError'
  }
}

/** What the public /ready body says of a failed health check: no address, no upstream detail. `missing` names the absent model. */
export function publicHealthFailure(failure: ModelError, missing: string): string {
  switch (failure.kind) {
    case 'model_not_found':
      return missing
    case 'aborted':
      return 'the model server did not answer in time'
    case 'unreachable':
      return 'the model server is not reachable'
    case 'upstream':
      return `the model server answered ${failure.status ?? 'with an error'}`
    case 'too_large':
      return 'the model server sent an answer over the size limit'
    default:
      return 'the model server sent a malformed answer'
  }
}

export interface ModelProvider {
  readonly name: string
  readonly model: string
  /** Is the server reachable and the model present? For /ready. */
  health(signal?: AbortSignal): Promise<ModelHealth>
  /** One image, one prompt, one answer. Throws ModelError. */
  describe(request: DescribeRequest): Promise<DescribeAnswer>
}

/** An answer with no more than MAX_MODEL_ANSWER_CHARS characters (never half a surrogate pair), and how long it was if it was cut. */
export function boundedAnswer(content: string): { content: string; cutFrom?: number } {
  if (content.length <= MAX_MODEL_ANSWER_CHARS) return { content }
  const high = content.charCodeAt(MAX_MODEL_ANSWER_CHARS - 1)
  const end = high >= 0xd800 && high <= 0xdbff ? MAX_MODEL_ANSWER_CHARS - 1 : MAX_MODEL_ANSWER_CHARS
  return { content: content.slice(0, end), cutFrom: content.length }
}

/** What a server says when it cannot apply an output schema: an unknown field or type, an unsupported schema or grammar. */
const ABOUT_STRUCTURE = /format|schema|grammar|guided|structured/iu

/**
 * Asks structured where the request wants it and this server has not refused it, else plain. A
 * 400/422/501 about the schema is retried once in plain text, and once that plain call has answered
 * (so the refusal was about the schema, not the image), the host is remembered as refusing: later
 * calls go plain directly. One per provider, that is per host; `call` makes one request in the given mode.
 */
export function structureFallback() {
  let refused = false
  return async (request: DescribeRequest, ask: (structured: boolean) => Promise<string>): Promise<DescribeAnswer> => {
    // Every answer is bounded here, the one way out of both providers, before anything reads it.
    const call = async (structured: boolean) => {
      if (request.calls && !request.calls.take()) throw budgetSpent()
      return boundedAnswer(await ask(structured))
    }
    if (!request.structured || refused) return { ...(await call(false)), structured: false }
    try {
      return { ...(await call(true)), structured: true }
    } catch (error) {
      const refusal =
        error instanceof ModelError &&
        error.kind === 'upstream' &&
        [400, 422, 501].includes(error.status ?? 0) &&
        ABOUT_STRUCTURE.test(error.message) &&
        !request.signal.aborted
      // With no call left, the refusal is the answer (and the host is asked structured again next time).
      if (!refusal || (request.calls && !request.calls.left())) throw error
      const answer = await call(false)
      refused = true
      return { ...answer, structured: false, structureRefused: error.message }
    }
  }
}
