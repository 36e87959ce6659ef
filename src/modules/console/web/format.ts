// Dates, sizes and counts as a person reads them, in the browser's locale.

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })
const dayMonth = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', timeZone: 'UTC' })

export const formatDateTime = (iso: string | null, none = 'never'): string => (iso ? dateTime.format(new Date(iso)) : none)
export const formatDate = (iso: string): string => dateOnly.format(new Date(iso))
/** A UTC day ("2026-11-23") as "23 Nov". */
export const formatDay = (day: string): string => dayMonth.format(new Date(`${day}T00:00:00Z`))

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`
}

/** "free" as "Free". */
export const planName = (plan: string): string => plan.charAt(0).toUpperCase() + plan.slice(1)
