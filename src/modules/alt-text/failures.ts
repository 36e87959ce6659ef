// What a failed stage of a generation tells the client: a hang-up, a refusal that stands, the model's
// failure (502, or 504 when it ran out of time), or a deadline that passed before the model was asked.
import { ModelError, type ModelProvider } from '../../model-provider/provider'
import { ApiError, ClientClosedError } from '../../shared/errors'
import type { Logger } from '../../shared/logger'
import { StoreBusyError } from '../../store/contract'
import type { Caller } from '../auth/service'
import type { Stage } from './service'

/** What the failures need of a request on its way: who asked, and its two signals. */
export type Attempt = {
  caller: Caller
  /** The client's signal alone: it aborts when the client hangs up. */
  clientSignal: AbortSignal
  /** Aborts when the client hangs up or the deadline passes, whichever comes first. */
  signal: AbortSignal
}

/** Whether the client, not the deadline, ended the request. */
export const clientGone = (run: Attempt) => run.clientSignal.aborted && run.signal.reason === run.clientSignal.reason

export type FailureDeps = { model: ModelProvider; logger: Logger; deadlineMs: number }

/**
 * What a failed stage tells the client. A hang-up is a ClientClosedError whatever the stage threw; an
 * ApiError (a refusal, or the intake or queue saying it is overloaded) or a busy database stands; the model call's
 * failures are 502, or 504 when that call ran out of time; a deadline passing in any other stage is
 * 503 overloaded, never "the model did not answer".
 */
export function stageFailures(deps: FailureDeps): (error: unknown, stage: Stage, run: Attempt) => unknown {
  const { model, logger } = deps

  const modelFailure = (error: unknown, run: Attempt): unknown => {
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

  return (error: unknown, stage: Stage, run: Attempt): unknown => {
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
}
