// Answers kept to be given again for the same image and options.

/** The formats the intake accepts (intake/types.ts IMAGE_FORMATS), as stored; the contract imports no other code. */
export type StoredImageFormat = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif' | 'svg'

export type CachedAltText = {
  /** '' for an image the model judged purely decorative (decorativeReason says why). */
  altText: string
  /** Why the model judged the image purely decorative; null (absent in entries of before) when it did not. */
  decorativeReason?: string | null
  /** The text the image shows, from a structured answer; null (absent in entries of before) when none or unknown. */
  textInImage?: string | null
  /** The long description of a complex image (asked with long_description); null (absent in entries of before) when none. */
  longDescription?: string | null
  /** The image is an animation, shown to the model as a grid of key frames; null (absent in entries of before) reads as false. */
  animated?: boolean | null
  wcagCompliant: boolean
  wcagIssues: string[]
  language: string
  model: string
  width: number
  height: number
  format: StoredImageFormat
}

export interface AltTextCacheStore {
  get(cacheKey: string, now: number): Promise<CachedAltText | null>
  put(cacheKey: string, entry: CachedAltText, now: number, expiresAt: number): Promise<void>
  purgeExpired(now: number): Promise<number>
}
