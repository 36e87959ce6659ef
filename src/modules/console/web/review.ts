// The review queue's filters as the page's address holds them (`/review?status=&mine=&target_kind=&language=&batch=`),
// so a filtered queue is a link (the Batches page links to one batch's items) and a reload keeps it;
// and which item the keyboard moves to. Decisions themselves live on the service, never here.
import type { Suggestion, SuggestionFilters } from './api'

export const STATUS_CHOICES = [
  { value: 'pending', text: 'Pending' },
  { value: 'accepted', text: 'Accepted' },
  { value: 'edited', text: 'Edited' },
  { value: 'rejected', text: 'Rejected' },
  { value: 'all', text: 'Any status' },
] as const

export type QueueFilters = { status: string; mine: boolean; targetKind: string; language: string; batch: string }

/** The filters of an address's query; pending by default. */
export function readFilters(search: string): QueueFilters {
  const params = new URLSearchParams(search)
  const status = params.get('status') ?? 'pending'
  return {
    status: STATUS_CHOICES.some((choice) => choice.value === status) ? status : 'pending',
    mine: params.get('mine') === 'true',
    targetKind: params.get('target_kind')?.trim() ?? '',
    language: params.get('language')?.trim() ?? '',
    batch: params.get('batch')?.trim() ?? '',
  }
}

/** The page's address for these filters (defaults left out). */
export function filtersPath(filters: QueueFilters): string {
  const params = new URLSearchParams()
  if (filters.status !== 'pending') params.set('status', filters.status)
  if (filters.mine) params.set('mine', 'true')
  if (filters.targetKind) params.set('target_kind', filters.targetKind)
  if (filters.language) params.set('language', filters.language)
  if (filters.batch) params.set('batch', filters.batch)
  const query = params.toString()
  return query ? `/review?${query}` : '/review'
}

/** The list's query parameters for GET /api/suggestions. */
export function apiFilters(filters: QueueFilters): SuggestionFilters {
  return {
    status: filters.status === 'all' ? undefined : filters.status,
    mine: filters.mine || undefined,
    target_kind: filters.targetKind || undefined,
    language: filters.language || undefined,
    batch_id: filters.batch || undefined,
  }
}

/** The first pending item after `from` (wrapping to the first one before it), or `from` when none is pending. */
export function nextPending(items: Suggestion[], from: number): number {
  for (let step = 1; step <= items.length; step++) {
    const index = (from + step) % items.length
    if (items[index]?.status === 'pending') return index
  }
  return from
}
