// Review of a batch's results before they land: a person accepts, edits or rejects each proposed alt
// text, and exports the accepted and edited rows as CSV. The decisions live in this browser tab only
// (sessionStorage, per signed-in email and batch): a reload keeps them, closing the tab drops them, and
// the service stores nothing of them. The CSV is the hand-over to whatever publishes the alt texts.
import { csvField } from '../../../cli/shared/csv'

export type Decision = { kind: 'accepted' } | { kind: 'edited'; alt: string } | { kind: 'rejected' }
export type Decisions = Record<number, Decision>

/** One batch item as the review shows it. */
export type ReviewRow = { index: number; proposed: string; decorative: boolean; metadata: Record<string, unknown> | null }

const storageKey = (email: string, batchId: string) => `alttext-review:${email}:${batchId}`

export function loadDecisions(email: string, batchId: string): Decisions {
  try {
    const stored = sessionStorage.getItem(storageKey(email, batchId))
    const parsed: unknown = stored ? JSON.parse(stored) : {}
    return parsed && typeof parsed === 'object' ? (parsed as Decisions) : {}
  } catch {
    // Storage refused (a private window's quota) or damaged: the review starts afresh.
    return {}
  }
}

export function saveDecisions(email: string, batchId: string, decisions: Decisions): void {
  try {
    sessionStorage.setItem(storageKey(email, batchId), JSON.stringify(decisions))
  } catch {
    // Not kept across a reload, still used in this page.
  }
}

export const CSV_HEADER = ['batch_id', 'index', 'decision', 'alt_text', 'proposed_alt_text', 'metadata']

/** The accepted and edited rows, in item order: the alt text to publish, what was proposed, and the item's metadata. */
export function reviewCsv(batchId: string, rows: ReviewRow[], decisions: Decisions): string {
  const lines = [CSV_HEADER.join(',')]
  for (const row of rows) {
    const decision = decisions[row.index]
    if (!decision || decision.kind === 'rejected') continue
    const alt = decision.kind === 'edited' ? decision.alt : row.proposed
    lines.push([batchId, row.index, decision.kind, alt, row.proposed, row.metadata === null ? null : JSON.stringify(row.metadata)].map(csvField).join(','))
  }
  return `${lines.join('\r\n')}\r\n`
}
