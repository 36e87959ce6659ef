// The review queue: proposed alt texts waiting for a person, each for one image in one named place.
import type { Actor } from './orgs'

export const SUGGESTION_STATUSES = ['pending', 'accepted', 'edited', 'rejected'] as const
export type SuggestionStatus = (typeof SUGGESTION_STATUSES)[number]

/** Where the alt text goes: free strings naming a WordPress attachment, a file and line, a URL. */
export type SuggestionTarget = {
  kind: string
  ref: string
  site: string | null
  /** What the place held when the suggestion was made (audit: the image's fingerprint), to refuse a stale write. */
  fingerprint: string | null
}

/** What the service saw of the image, for the reviewer. */
export type SuggestionImage = {
  /** The address it came from; null for an upload. */
  url: string | null
  format: string | null
  width: number | null
  height: number | null
  /** A small WebP of the image, for the review page; null when none could be made. */
  thumbnail: Uint8Array | null
}

export type SuggestionChecks = {
  wcagCompliant: boolean | null
  wcagIssues: string[]
  /** The judge's verdict when one was asked for (its JSON as answered), else null. */
  verdict: Record<string, unknown> | null
  decorative: boolean
}

export type NewSuggestion = {
  publicId: string
  target: SuggestionTarget
  currentAlt: string | null
  proposedAlt: string
  language: string
  image: SuggestionImage
  checks: SuggestionChecks
  /** The batch whose item made it, if one did. */
  batchId: string | null
}

export type SuggestionRecord = Omit<NewSuggestion, 'image'> & {
  id: number
  orgId: number
  status: SuggestionStatus
  /** The image without its thumbnail bytes (SuggestionStore.thumbnail has them); `hasThumbnail` says whether there is one. */
  image: Omit<SuggestionImage, 'thumbnail'> & { hasThumbnail: boolean }
  createdBy: number | null
  createdByEmail: string | null
  createdAt: number
  decidedBy: number | null
  decidedByEmail: string | null
  decidedAt: number | null
  /** The alt text decided on (accepted or edited); null while pending and when rejected. */
  finalAlt: string | null
  /** Why it was rejected, when the reviewer said. */
  reason: string | null
}

export type SuggestionFilter = {
  status?: SuggestionStatus
  targetKind?: string
  createdBy?: number
  language?: string
}

/** A decision on a pending suggestion. */
export type Decision = { status: 'accepted' | 'edited'; finalAlt: string } | { status: 'rejected'; reason: string | null }

export interface SuggestionStore {
  /** Inserts a pending suggestion with its `suggestion.created` entry, in one transaction. */
  create(orgId: number, suggestion: NewSuggestion, actor: Actor): Promise<SuggestionRecord>
  get(orgId: number, publicId: string): Promise<SuggestionRecord | null>
  /** The organisation's suggestions matching `filter`, newest first, with ids below `beforeId` (null: from the newest). */
  list(orgId: number, filter: SuggestionFilter, limit: number, beforeId: number | null): Promise<SuggestionRecord[]>
  /** How many match, counted up to `cap` (a count of every row would scan a large queue on each page). */
  count(orgId: number, filter: SuggestionFilter, cap: number): Promise<number>
  thumbnail(orgId: number, publicId: string): Promise<Uint8Array | null>
  /**
   * Decides a pending suggestion in one transaction: the decision, its activity entry and, when the
   * organisation has a webhook, its `suggestion.decided` delivery. `already_decided` when it is not pending
   * (a decision at the same moment won), null when the organisation has no such suggestion.
   */
  decide(orgId: number, publicId: string, decision: Decision, actor: Actor): Promise<SuggestionRecord | 'already_decided' | null>
  /** Makes a decided suggestion pending again (undo), with its entry and delivery; `not_decided` when it is pending. */
  reopen(orgId: number, publicId: string, actor: Actor): Promise<SuggestionRecord | 'not_decided' | null>
}
