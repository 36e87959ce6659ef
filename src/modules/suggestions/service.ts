// The review queue: a suggestion is a proposed alt text for one image in one place, made by an author
// (or a batch, an audit, an integration) and decided by a reviewer. Decisions are the store's one guarded
// write, so of two reviewers at once one wins and the other is told. No HTTP here.
import type { FetchedImage, ImageIntake, ReceivedImage } from '../../intake'
import { randomHex } from '../../shared/crypto'
import { ApiError } from '../../shared/errors'
import type { Logger } from '../../shared/logger'
import type { Decision, NewSuggestion, SuggestionFilter, SuggestionRecord, SuggestionStatus, SuggestionTarget, Store } from '../../store/contract'
import { DEFAULT_LANGUAGE } from '../alt-text/model'
import type { AltTextInput, AltTextService } from '../alt-text/service'
import { checkWcag } from '../alt-text/wcag'
import type { Caller } from '../auth/service'
import { actorOf } from '../orgs/service'
import { suggestionView } from '../../store/shared/suggestion-view'

const THUMBNAIL_SIDE = 192

/** `total` counts this far and no further: 10,000 means at least that many. */
export const MAX_COUNTED_SUGGESTIONS = 10_000

export const newSuggestionId = (): string => `sug_${randomHex(12)}`

const notFound = () => new ApiError('suggestion_not_found', 'the organisation you act in has no suggestion with this id')
const alreadyDecided = () =>
  new ApiError('already_decided', 'someone decided this suggestion already (possibly a moment ago); read it again, or reopen it to decide anew')

/** What a new suggestion says besides its image: the API's fields, as parsed. */
export type SuggestionInput = AltTextInput & {
  target: { kind: string; ref: string; site?: string | null; fingerprint?: string | null }
  current_alt?: string | null
  proposed_alt?: string | null
}

/** What made a suggestion when no author did: a batch item (its owner pays and is named in the log). */
export type SuggestionSource = { batchId: string | null }

/** Collapses the whitespace an editor or a model leaves: an alt text is one line. */
const oneLine = (text: string) => text.replace(/\s+/gu, ' ').trim()

export function createSuggestionsService(deps: {
  store: Store
  altText: AltTextService
  intake: ImageIntake
  logger: Logger
  clock: () => number
  /** A decision or a reopening was written (it may have queued a webhook delivery): the dispatcher looks now. */
  onDecided?: () => void
}) {
  const { store, altText, intake, logger, clock } = deps

  /** A small WebP for the review page, made from the image as the model would see it (within the decode budget). */
  const thumbnailOf = async (image: FetchedImage, signal: AbortSignal, owner: number): Promise<Uint8Array | null> => {
    try {
      const prepared = await intake.prepare(image, signal, owner)
      const { default: sharp } = await import('sharp')
      const webp = await sharp(prepared.data)
        .resize(THUMBNAIL_SIDE, THUMBNAIL_SIDE, { fit: 'inside', withoutEnlargement: true })
        .webp({ quality: 70 })
        .toBuffer()
      return new Uint8Array(webp)
    } catch (error) {
      // A suggestion without a thumbnail is still a suggestion: the reviewer sees the target and the text.
      logger.warn('suggestion thumbnail not made', { error: String(error) })
      return null
    }
  }

  const obtain = (input: SuggestionInput, signal: AbortSignal, owner: number): Promise<FetchedImage> => {
    if (input.upload) return intake.accept(input.upload, signal, owner)
    if (!input.image_url)
      throw new ApiError('invalid_request', 'send exactly one image source: image_url, image_base64, or a multipart file in the field image')
    return intake.fetch(input.image_url, signal, owner)
  }

  const decided = (result: SuggestionRecord | 'already_decided' | 'not_decided' | null) => {
    if (result === null) throw notFound()
    if (result === 'already_decided') throw alreadyDecided()
    if (result === 'not_decided') throw new ApiError('not_decided', 'this suggestion is pending: there is no decision to undo')
    deps.onDecided?.()
    return suggestionView(result)
  }

  const decide = async (caller: Caller, id: string, decision: Decision) => {
    const result = await store.suggestions.decide(caller.org.id, id, decision, actorOf(caller, clock()))
    if (result !== null && result !== 'already_decided')
      logger.info('suggestion decided', { org_id: caller.org.publicId, suggestion_id: id, status: result.status })
    return decided(result)
  }

  const target = (t: SuggestionInput['target']): SuggestionTarget => ({ kind: t.kind, ref: t.ref, site: t.site ?? null, fingerprint: t.fingerprint ?? null })

  return {
    /** One of the caller's upload places, taken before an upload is read (as POST /api/alt-text does). */
    uploadPlace: (caller: Caller, signal: AbortSignal) => intake.uploadPlace(signal, caller.account.id),

    /**
     * A pending suggestion of the caller's organisation. Without `proposed_alt` the service writes one as
     * POST /api/alt-text would (one credit, cached answers free); with it, only the checks run (free).
     */
    async create(caller: Caller, input: SuggestionInput, signal: AbortSignal, source: SuggestionSource = { batchId: null }) {
      const owner = caller.account.id
      try {
        const image = await obtain(input, signal, owner)
        let proposed: string
        let checks: NewSuggestion['checks']
        let language = input.language ?? DEFAULT_LANGUAGE
        if (input.proposed_alt != null && input.proposed_alt.trim() !== '') {
          proposed = oneLine(input.proposed_alt)
          const wcag = checkWcag(proposed, input.max_length, language)
          checks = { wcagCompliant: wcag.compliant, wcagIssues: wcag.issues, verdict: null, decorative: false }
        } else {
          // The bytes are in hand: the generation reads them as an upload, so the image is fetched once.
          const received: ReceivedImage = { bytes: image.bytes, contentHash: image.contentHash }
          const result = await altText.generate(caller, { ...input, image_url: null, upload: received, uploadPlace: undefined }, signal)
          proposed = result.alt_text
          language = result.language
          checks = { wcagCompliant: result.wcag_compliant, wcagIssues: result.wcag_issues, verdict: null, decorative: result.decorative }
        }
        const thumbnail = await thumbnailOf(image, signal, owner)
        const made = await store.suggestions.create(
          caller.org.id,
          {
            publicId: newSuggestionId(),
            target: target(input.target),
            currentAlt: input.current_alt == null ? null : oneLine(input.current_alt),
            proposedAlt: proposed,
            language,
            image: { url: image.finalUrl, format: image.format, width: image.width, height: image.height, thumbnail },
            checks,
            batchId: source.batchId,
          },
          actorOf(caller, clock()),
        )
        return suggestionView(made)
      } finally {
        input.uploadPlace?.()
      }
    },

    async list(
      caller: Caller,
      query: { status?: SuggestionStatus; target_kind?: string; language?: string; mine?: 'true' | 'false'; cursor?: string; limit?: number },
    ) {
      const filter: SuggestionFilter = {
        status: query.status,
        targetKind: query.target_kind,
        language: query.language,
        createdBy: query.mine === 'true' ? caller.account.id : undefined,
      }
      const limit = query.limit ?? 50
      const [page, total] = await Promise.all([
        store.suggestions.list(caller.org.id, filter, limit + 1, query.cursor ? Number(query.cursor) : null),
        store.suggestions.count(caller.org.id, filter, MAX_COUNTED_SUGGESTIONS),
      ])
      const shown = page.slice(0, limit)
      return { suggestions: shown.map(suggestionView), next_cursor: page.length > limit ? String(shown.at(-1)!.id) : null, total }
    },

    async get(caller: Caller, id: string) {
      const found = await store.suggestions.get(caller.org.id, id)
      if (!found) throw notFound()
      return suggestionView(found)
    },

    async thumbnail(caller: Caller, id: string) {
      const bytes = await store.suggestions.thumbnail(caller.org.id, id)
      if (!bytes) throw notFound()
      return bytes
    },

    /** Accepts the proposed text, or `altText` instead (then the status is `edited`). */
    async accept(caller: Caller, id: string, altTextGiven: string | null | undefined) {
      const current = await store.suggestions.get(caller.org.id, id)
      if (!current) throw notFound()
      const finalAlt = altTextGiven == null ? current.proposedAlt : oneLine(altTextGiven)
      return decide(caller, id, { status: finalAlt === current.proposedAlt ? 'accepted' : 'edited', finalAlt })
    },

    reject: (caller: Caller, id: string, reason: string | null | undefined) => decide(caller, id, { status: 'rejected', reason: reason ? reason : null }),

    async reopen(caller: Caller, id: string) {
      return decided(await store.suggestions.reopen(caller.org.id, id, actorOf(caller, clock())))
    },

    /** "Accept all shown": each as its own decision, so one decided meanwhile does not stop the others. */
    async acceptMany(caller: Caller, ids: string[]) {
      const outcome = { accepted: [] as string[], already_decided: [] as string[], not_found: [] as string[] }
      for (const id of new Set(ids)) {
        const current = await store.suggestions.get(caller.org.id, id)
        if (!current) {
          outcome.not_found.push(id)
          continue
        }
        const result = await store.suggestions.decide(caller.org.id, id, { status: 'accepted', finalAlt: current.proposedAlt }, actorOf(caller, clock()))
        if (result === null) outcome.not_found.push(id)
        else if (result === 'already_decided') outcome.already_decided.push(id)
        else outcome.accepted.push(id)
      }
      if (outcome.accepted.length > 0) deps.onDecided?.()
      return outcome
    },
  }
}

export type SuggestionsService = ReturnType<typeof createSuggestionsService>
