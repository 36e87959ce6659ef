// The vision model behind a small interface: a second provider is a new file implementing it.

export type ModelHealth = { ok: true; detail: string } | { ok: false; detail: string }

export interface ModelProvider {
  readonly name: string
  readonly model: string
  /** Is the server reachable and the model present? For /ready. */
  health(signal?: AbortSignal): Promise<ModelHealth>
}
