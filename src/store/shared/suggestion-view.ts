// A suggestion as the API shows it (GET /api/suggestions/:id), shared by the suggestions module and the
// stores, which build the `suggestion.decided` webhook event from it inside the decision's transaction.
import { iso } from '../../shared/time'
import type { Actor, SuggestionRecord } from '../contract'

export function suggestionView(s: SuggestionRecord) {
  return {
    id: s.publicId,
    status: s.status,
    proposed_alt: s.proposedAlt,
    current_alt: s.currentAlt,
    final_alt: s.finalAlt,
    target: { kind: s.target.kind, ref: s.target.ref, site: s.target.site, fingerprint: s.target.fingerprint },
    language: s.language,
    image: {
      url: s.image.url,
      format: s.image.format,
      width: s.image.width,
      height: s.image.height,
      thumbnail_url: s.image.hasThumbnail ? `/api/suggestions/${s.publicId}/thumbnail` : null,
    },
    wcag_compliant: s.checks.wcagCompliant,
    wcag_issues: s.checks.wcagIssues,
    verdict: s.checks.verdict,
    decorative: s.checks.decorative,
    batch_id: s.batchId,
    created_at: iso(s.createdAt),
    created_by: s.createdByEmail,
    decided_at: iso(s.decidedAt),
    decided_by: s.decidedByEmail,
    reason: s.reason,
  }
}

export type SuggestionDecision = 'accepted' | 'edited' | 'rejected' | 'reopened'

/**
 * The body of a `suggestion.decided` delivery (JSON text, fixed when queued, so every attempt sends the
 * same bytes): the suggestion as it is after the decision, and who decided what when. A reopen is
 * `reopened`, by whoever reopened it.
 */
export function suggestionDecidedPayload(orgPublicId: string, suggestion: SuggestionRecord, decision: SuggestionDecision, actor: Actor): string {
  return JSON.stringify({
    event: 'suggestion.decided',
    org_id: orgPublicId,
    suggestion: suggestionView(suggestion),
    decision,
    decided_by: actor.email,
    decided_at: iso(actor.now),
  })
}
