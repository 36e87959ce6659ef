// A pool of model hosts (ALTTEXT_MODEL_HOSTS), one provider each. A call goes to the healthy host with the
// fewest calls in flight; a host that refuses connections or fails its health check is taken out for a
// backoff period (doubling up to a cap) and probed back in by its health check, in the background. A call
// whose host failed before any usable answer arrived (no connection, a 5xx, a body that is not JSON, cut
// off, or over the byte cap) is retried once on another host, within the same signal (the request's
// deadline) if the request's call budget allows; the credit is held and charged by the caller, once,
// around the whole call.
import type { Logger } from '../shared/logger'
import { type DescribeAnswer, type DescribeRequest, ModelError, type ModelHealth, type ModelProvider } from './provider'

export type PoolBackoff = { initialMs: number; maxMs: number; probeTimeoutMs?: number }

export type ModelPool = ModelProvider & {
  /** How many hosts take calls now, of how many configured. */
  hosts(): { healthy: number; total: number }
  /** Each host as configured (an origin: no credentials), whether it takes calls, and its calls in flight (for /metrics). */
  hostStates(): { url: string; healthy: boolean; inFlight: number }[]
  /** Generations the pool can run at once: healthy hosts × per-host concurrency (all hosts when none is healthy). */
  capacity(): number
  /** Stops the probes. */
  close(): void
}

type Host = {
  url: string
  provider: ModelProvider
  inFlight: number
  healthy: boolean
  backoffMs: number
  probe: ReturnType<typeof setTimeout> | null
}

/**
 * Failed before any usable answer arrived: worth one more try on another host. A host answering what is
 * not JSON (or not a model's answer), a body cut off, or one over the byte cap (read only up to the cap,
 * so a retry reads at most as much again) is broken as one answering 5xx is.
 */
const retryable = (error: unknown) =>
  error instanceof ModelError &&
  (error.kind === 'unreachable' || error.kind === 'malformed' || error.kind === 'too_large' || (error.kind === 'upstream' && (error.status ?? 500) >= 500))

export function createModelPool(options: {
  hosts: { url: string; provider: ModelProvider }[]
  concurrency: number
  logger?: Logger
  backoff?: Partial<PoolBackoff>
  /** Called when a host goes out or comes back (the queue's capacity changed). */
  onChange?: () => void
}): ModelPool {
  const initialMs = options.backoff?.initialMs ?? 2000
  const maxMs = options.backoff?.maxMs ?? 60_000
  const probeTimeoutMs = options.backoff?.probeTimeoutMs ?? 2000
  const { logger, concurrency } = options
  const hosts: Host[] = options.hosts.map(({ url, provider }) => ({ url, provider, inFlight: 0, healthy: true, backoffMs: initialMs, probe: null }))
  if (hosts.length === 0) throw new Error('a model pool needs at least one host')
  const first = hosts[0]!
  let closed = false
  let turn = 0

  const healthyCount = () => hosts.filter((h) => h.healthy).length

  const schedule = (host: Host) => {
    if (closed || host.probe) return
    host.probe = setTimeout(() => {
      host.probe = null
      void host.provider.health(AbortSignal.timeout(probeTimeoutMs)).then(
        (health) => (health.ok ? markIn(host) : retryLater(host, health.detail)),
        (error: unknown) => retryLater(host, error instanceof Error ? error.message : String(error)),
      )
    }, host.backoffMs)
    host.probe.unref?.()
  }

  const retryLater = (host: Host, detail: string) => {
    if (host.healthy) return markOut(host, detail)
    host.backoffMs = Math.min(maxMs, host.backoffMs * 2)
    schedule(host)
  }

  const markOut = (host: Host, detail: string) => {
    if (!host.healthy) return
    host.healthy = false
    host.backoffMs = initialMs
    logger?.warn('model host taken out', { host: host.url, detail, retry_in_ms: host.backoffMs, healthy: healthyCount(), total: hosts.length })
    schedule(host)
    options.onChange?.()
  }

  const markIn = (host: Host) => {
    if (host.probe) clearTimeout(host.probe)
    host.probe = null
    host.backoffMs = initialMs
    if (host.healthy) return
    host.healthy = true
    logger?.info('model host back', { host: host.url, healthy: healthyCount(), total: hosts.length })
    options.onChange?.()
  }

  /** The least-loaded healthy host not in `except` (ties in turn); any host when none is healthy. */
  const pick = (except?: Host): Host | null => {
    const candidates = hosts.filter((h) => h !== except)
    const pool = candidates.filter((h) => h.healthy)
    const from = pool.length > 0 ? pool : except ? [] : candidates
    let best: Host | null = null
    const start = turn++ % hosts.length
    for (let i = 0; i < hosts.length; i++) {
      const host = hosts[(start + i) % hosts.length]!
      if (!from.includes(host)) continue
      if (!best || host.inFlight < best.inFlight) best = host
    }
    return best
  }

  const callOn = async (host: Host, request: DescribeRequest): Promise<DescribeAnswer> => {
    host.inFlight++
    try {
      return await host.provider.describe(request)
    } catch (error) {
      if (error instanceof ModelError && error.kind === 'unreachable' && !request.signal.aborted) markOut(host, error.message)
      throw error
    } finally {
      host.inFlight--
    }
  }

  return {
    name: first.provider.name,
    model: first.provider.model,
    hosts: () => ({ healthy: healthyCount(), total: hosts.length }),
    hostStates: () => hosts.map(({ url, healthy, inFlight }) => ({ url, healthy, inFlight })),
    capacity: () => (healthyCount() || hosts.length) * concurrency,
    async describe(request) {
      const host = pick()!
      try {
        return await callOn(host, request)
      } catch (error) {
        if (!retryable(error) || request.signal.aborted || (request.calls && !request.calls.left())) throw error
        const other = pick(host)
        if (!other) throw error
        logger?.warn('model host failed before answering; trying another', {
          host: host.url,
          next: other.url,
          detail: error instanceof Error ? error.message : String(error),
        })
        return await callOn(other, request)
      }
    },
    async health(signal): Promise<ModelHealth> {
      const results = await Promise.all(
        hosts.map((host) =>
          host.provider.health(signal).then(
            (health) => health,
            (error: unknown): ModelHealth => ({ ok: false, detail: String(error), publicDetail: 'the model check failed' }),
          ),
        ),
      )
      results.forEach((health, i) => {
        if (health.ok) markIn(hosts[i]!)
        else markOut(hosts[i]!, health.detail)
      })
      if (hosts.length === 1) return results[0]!
      const ok = results.filter((r) => r.ok).length
      const detail = results.map((r) => r.detail).join('; ')
      const sample = results.find((r) => r.ok) ?? results[0]!
      return { ok: ok > 0, detail, publicDetail: `${ok} of ${hosts.length} model hosts healthy: ${sample.publicDetail}` }
    },
    close() {
      closed = true
      for (const host of hosts) if (host.probe) clearTimeout(host.probe)
    },
  }
}
