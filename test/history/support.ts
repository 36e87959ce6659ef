// Shared by the history tests: a history entry as the alt-text service would record it, and a look at the
// tables themselves (on either engine).
import type { HistoryEntry } from '../../src/modules/history/service'
import type { TestService } from '../support/service'

export function entry(overrides: Partial<HistoryEntry> = {}): HistoryEntry {
  return {
    source: 'url',
    format: 'jpeg',
    bytes: 48_213,
    width: 800,
    height: 600,
    altText: 'A red bicycle leaning against a brick wall',
    decorative: false,
    language: 'en',
    style: 'descriptive',
    maxLength: 125,
    characterCount: 42,
    ...overrides,
  }
}

export const historyRows = async (service: TestService, accountId: number) =>
  (await service.query<{ n: number }>('SELECT count(*) AS n FROM generation_history WHERE account_id = ?', accountId))[0]!.n

/** The account id behind an email (the API never shows it; the recorder is called with it). */
export const accountIdOf = async (service: TestService, email: string) =>
  (await service.query<{ id: number }>('SELECT id FROM accounts WHERE email = ?', email))[0]!.id

export const DAY_MS = 86_400_000
