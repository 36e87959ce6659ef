// The vision model behind a small interface: a second provider is a new file implementing it.

/**
 * `detail` is for the operator (it may name the server's address); `publicDetail` says the same without
 * addresses or host names, for the public /ready body.
 */
export type ModelHealth = { ok: boolean; detail: string; publicDetail: string }

export type DescribeRequest = {
  image: { data: Uint8Array; mime: 'image/png' | 'image/jpeg' }
  system: string
  prompt: string
  /** Upper bound on generated tokens. */
  maxTokens: number
  /** Aborts the call (deadline passed or client gone); the provider must stop the upstream request. */
  signal: AbortSignal
}

export type ModelFailure = 'unreachable' | 'model_not_found' | 'upstream' | 'malformed' | 'aborted'

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
  describe(request: DescribeRequest): Promise<string>
}
