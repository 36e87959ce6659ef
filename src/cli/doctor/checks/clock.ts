// The clock check of `alttext doctor`: this machine's clock against the PostgreSQL server's, the newest
// database record (one from the future: the clock was set back) and the first model server with a Date header.
import type { Config } from '../../../config'
import { databaseClockCheck } from '../postgres'
import { type CheckResult, result, seconds } from '../result'

/** Clocks further apart than this fail the clock check (sessions, expiries and webhook signatures rely on time). */
const CLOCK_TOLERANCE_MS = 60_000
/** A database record this far in the future means the clock was set back. */
const FUTURE_TOLERANCE_MS = 5 * 60_000

/** When did the clock of a model host say it was? From its Date header; null without one. */
async function hostTime(host: string, timeoutMs: number, clock: () => number): Promise<number | null> {
  try {
    const sent = clock()
    const response = await fetch(`${host}/`, { signal: AbortSignal.timeout(timeoutMs) })
    await response.arrayBuffer()
    const date = Date.parse(response.headers.get('date') ?? '')
    // The header has whole seconds; the middle of the exchange is the best guess of when it was written.
    return Number.isNaN(date) ? null : date + 500 - (clock() - sent) / 2
  } catch {
    return null
  }
}

/** `newest`: the newest database record's time; `databaseSkewMs`: this machine's clock less the PostgreSQL server's. */
export async function clockCheck(
  config: Config,
  newest: number | null,
  timeoutMs: number,
  clock: () => number,
  databaseSkewMs: number | null = null,
): Promise<CheckResult> {
  const name = 'clock'
  const now = clock()
  const fix = 'keep the clock synchronised (timedatectl set-ntp true, or chrony): credit periods, key expiry, sessions and webhook signatures follow it'
  const notes = [`${new Date(now).toISOString()} here`]
  // Replicas stamp the times they write with their own clocks: they must agree with each other, and the database server's is a shared reference.
  if (databaseSkewMs !== null) {
    const apart = databaseClockCheck(databaseSkewMs)
    if (apart) return apart
    notes.push(`the PostgreSQL server agrees within ${Math.max(1, Math.ceil(Math.abs(databaseSkewMs) / 1000))} s`)
  }
  if (newest !== null) {
    if (newest > now + FUTURE_TOLERANCE_MS)
      return result(
        'clock',
        name,
        'fail',
        `the database has a record from ${new Date(newest).toISOString()}, ${seconds(newest - now)} after this machine's time: the clock was set back`,
        fix,
      )
    notes.push(`newest database record ${new Date(newest).toISOString()}`)
  }
  for (const host of config.modelHosts) {
    const theirs = await hostTime(host, timeoutMs, clock)
    if (theirs === null) continue
    const skew = clock() - theirs
    if (Math.abs(skew) > CLOCK_TOLERANCE_MS)
      return result(
        'clock',
        name,
        'fail',
        `this machine's clock is ${seconds(Math.abs(skew))} ${skew > 0 ? 'ahead of' : 'behind'} the model server at ${host}`,
        fix,
      )
    notes.push(`the model server at ${host} agrees within ${Math.max(1, Math.ceil(Math.abs(skew) / 1000))} s`)
    break
  }
  if (notes.length === 1) return result('clock', name, 'skip', `${notes[0]}; nothing to compare with (no database record, no Date header from a model server)`)
  return result('clock', name, 'pass', notes.join('; '))
}
