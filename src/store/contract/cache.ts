// Answers kept to be given again for the same image and options.

export type CachedAltText = {
  /** '' for an image the model judged purely decorative (decorativeReason says why). */
  altText: string
  /** Why the model judged the image purely decorative; null (absent in entries of before) when it did not. */
  decorativeReason?: string | null
  /** The text the image shows, from a structured answer; null (absent in entries of before) when none or unknown. */
  textInImage?: string | null
  /** The long description of a complex image (asked with long_description); null (absent in entries of before) when none. */
  longDescription?: string | null
  wcagCompliant: boolean
  wcagIssues: string[]
  language: string
  model: string
  width: number
  height: number
  format: 'jpeg' | 'png' | 'gif' | 'webp'
}

export interface AltTextCacheStore {
  get(cacheKey: string, now: number): Promise<CachedAltText | null>
  put(cacheKey: string, entry: CachedAltText, now: number, expiresAt: number): Promise<void>
  purgeExpired(now: number): Promise<number>
}
