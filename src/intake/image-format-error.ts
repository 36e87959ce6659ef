// The refusal of bytes by the format checks (image-format.ts, svg.ts), apart so that both can throw it.

/** Why bytes are unusable; the caller turns it into the client-facing refusal. */
export class ImageFormatError extends Error {
  constructor(
    readonly reason: 'empty' | 'unsupported' | 'corrupt',
    message: string,
  ) {
    super(message)
  }
}
