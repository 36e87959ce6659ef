// Billing periods are calendar months in UTC; "today" is the UTC day.

export type Period = { id: string; start: number; end: number }

export function periodOf(now: number): Period {
  const d = new Date(now)
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  return { id: new Date(start).toISOString().slice(0, 7), start, end }
}

export function dayOf(now: number): string {
  return new Date(now).toISOString().slice(0, 10)
}

export function iso(ms: number): string
export function iso(ms: number | null): string | null
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString()
}
