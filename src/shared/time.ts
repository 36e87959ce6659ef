// Billing periods are calendar months in UTC; "today" is the UTC day.

export type Period = { id: string; start: number; end: number; startIso: string; endIso: string }

// Every request asks for the current period and day: compute each once per boundary.
let cachedPeriod: Period | null = null
let cachedDay: { start: number; end: number; id: string } | null = null

export function periodOf(now: number): Period {
  if (cachedPeriod && now >= cachedPeriod.start && now < cachedPeriod.end) return cachedPeriod
  cachedPeriod = computePeriod(now)
  return cachedPeriod
}

function computePeriod(now: number): Period {
  const d = new Date(now)
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  const startIso = new Date(start).toISOString()
  return { id: startIso.slice(0, 7), start, end, startIso, endIso: new Date(end).toISOString() }
}

export function dayOf(now: number): string {
  if (cachedDay && now >= cachedDay.start && now < cachedDay.end) return cachedDay.id
  const start = now - (((now % 86_400_000) + 86_400_000) % 86_400_000)
  cachedDay = { start, end: start + 86_400_000, id: new Date(start).toISOString().slice(0, 10) }
  return cachedDay.id
}

export function iso(ms: number): string
export function iso(ms: number | null): string | null
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString()
}
