// Billing periods are calendar months in UTC; "today" is the UTC day.

export type Period = { id: string; start: number; end: number; startIso: string; endIso: string }

/**
 * The billing period and the day of a time. Every request asks for them, so each is computed once per
 * boundary; the memory belongs to whoever creates the calendar.
 */
export function createCalendar() {
  let period: Period | null = null
  let day: { start: number; end: number; id: string } | null = null
  return {
    periodOf(now: number): Period {
      if (period === null || now < period.start || now >= period.end) period = computePeriod(now)
      return period
    },
    dayOf(now: number): string {
      if (day === null || now < day.start || now >= day.end) {
        const start = now - (((now % 86_400_000) + 86_400_000) % 86_400_000)
        day = { start, end: start + 86_400_000, id: new Date(start).toISOString().slice(0, 10) }
      }
      return day.id
    },
  }
}

function computePeriod(now: number): Period {
  const d = new Date(now)
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  const startIso = new Date(start).toISOString()
  return { id: startIso.slice(0, 7), start, end, startIso, endIso: new Date(end).toISOString() }
}

export function iso(ms: number): string
export function iso(ms: number | null): string | null
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString()
}
