// Liveness and readiness. Readiness writes to the database (a probe that really commits), asks the
// model server, and writes to Redis when it is configured, each with a short timeout. Its public details
// name no address or host: those go to the operator log, once per change of a check's state.
import type { ModelProvider } from '../../model-provider/provider'
import type { Logger } from '../../shared/logger'
import { READINESS_MIN_INTERVAL_MS } from '../../shared/limits'
import type { Store } from '../../store/contract'
import { VERSION } from '../../version'

export type Check = { ok: boolean; detail: string }

export type HealthOptions = {
  /** Where the operator detail of a failing check goes (with the model server's address). */
  logger?: Logger
  /** Deadline of one model-server check. */
  timeoutMs?: number
  /** A model check answers every readiness request for this long: a polled /ready costs the model server one call per period. */
  modelCacheMs?: number
  /** The model host pool's count of healthy hosts, for the public body (never their addresses). */
  hosts?: () => { healthy: number; total: number }
  /** Redis (ALTTEXT_REDIS_URL), when configured: a write within the deadline. */
  redis?: (timeoutMs: number) => Promise<Check>
  /** Several replicas and no Redis: the `redis` check passes and says that limits hold per replica. */
  limitsPerReplica?: boolean
  /** Checks start at most this often (READINESS_MIN_INTERVAL_MS). */
  minIntervalMs?: number
  /**
   * The change feed's state where it can tell (PostgreSQL): a `changes` check that never makes the replica
   * unready, since a replica that does not hear the feed serves correctly from the database (degraded).
   */
  changes?: () => Check | undefined
}

/** The `redis` check's detail with PostgreSQL and no Redis (the service also warns at start-up). */
export const LIMITS_PER_REPLICA =
  'not configured: rate limits and the sign-in slow-down hold per replica (each replica counts alone); set ALTTEXT_REDIS_URL to share them'

const DEFAULT_MODEL_CACHE_MS = 3000

const message = (error: unknown) => (error instanceof Error ? error.message : String(error))

export function createHealthService(store: Store, model: ModelProvider, options: HealthOptions = {}) {
  const { logger } = options
  const timeoutMs = options.timeoutMs ?? 2000
  const modelCacheMs = options.modelCacheMs ?? DEFAULT_MODEL_CACHE_MS

  // The operator hears of a check when its state changes, not on every poll.
  const lastLogged = new Map<string, string>()
  const report = (name: string, ok: boolean, operatorDetail: string) => {
    const state = `${ok}:${operatorDetail}`
    if (lastLogged.get(name) === state) return
    const first = !lastLogged.has(name)
    lastLogged.set(name, state)
    if (!ok) logger?.warn('readiness check failed', { check: name, detail: operatorDetail })
    else if (!first) logger?.info('readiness check passes again', { check: name, detail: operatorDetail })
  }

  let cached: { check: Check; at: number } | null = null
  // One model-server call at a time, shared by every readiness request that arrives meanwhile.
  let inFlight: Promise<Check> | null = null
  const modelCheck = (): Promise<Check> => {
    if (cached && performance.now() - cached.at < modelCacheMs) return Promise.resolve(cached.check)
    inFlight ??= model
      .health(AbortSignal.timeout(timeoutMs))
      .then(
        (health) => {
          report('model', health.ok, health.detail)
          return { ok: health.ok, detail: health.publicDetail }
        },
        (error: unknown) => {
          report('model', false, message(error))
          return { ok: false, detail: 'the model check failed' }
        },
      )
      .then((check) => {
        cached = { check, at: performance.now() }
        inFlight = null
        return check
      })
    return inFlight
  }

  const databaseCheck = (): Promise<Check> =>
    Promise.resolve()
      .then(() => store.probe())
      .then(
        () => {
          report('database', true, 'writable')
          return { ok: true, detail: 'writable' }
        },
        (error: unknown) => {
          report('database', false, message(error))
          // SQLite's messages name no path ("database or disk is full", "database disk image is malformed").
          return { ok: false, detail: `write probe failed: ${message(error)}` }
        },
      )

  const redisCheck = (): Promise<Check> | undefined => {
    if (options.redis === undefined) return options.limitsPerReplica ? Promise.resolve({ ok: true, detail: LIMITS_PER_REPLICA }) : undefined
    return options.redis(timeoutMs).then((check) => {
      report('redis', check.ok, check.detail)
      return check
    })
  }

  const check = async () => {
    const [database, modelState, redis] = await Promise.all([databaseCheck(), modelCheck(), redisCheck()])
    const hosts = options.hosts?.() ?? { healthy: modelState.ok ? 1 : 0, total: 1 }
    const changes = options.changes?.()
    // Without Redis and on one machine, the body stays as it always was.
    const checks = {
      database,
      model: modelState,
      ...(redis === undefined ? {} : { redis }),
      ...(changes === undefined ? {} : { changes }),
    }
    return { ready: database.ok && modelState.ok && hosts.healthy > 0 && (redis?.ok ?? true), checks, hosts }
  }

  // /ready is not rate limited: its cost is bounded here instead (see READINESS_MIN_INTERVAL_MS). A request
  // never gets the result of a check that started before it arrived, so no answer is stale.
  const minIntervalMs = options.minIntervalMs ?? READINESS_MIN_INTERVAL_MS
  let running: ReturnType<typeof check> | null = null
  /** The next check, shared by every request that arrives before it starts. */
  let next: ReturnType<typeof check> | null = null
  let lastStart = Number.NEGATIVE_INFINITY
  const start = () => {
    lastStart = performance.now()
    const run = check().finally(() => {
      if (running === run) running = null
    })
    running = run
    return run
  }
  const readiness = (): ReturnType<typeof check> => {
    if (next) return next
    if (!running && performance.now() - lastStart >= minIntervalMs) return start()
    next = (async () => {
      await running
      const wait = lastStart + minIntervalMs - performance.now()
      if (wait > 0) await Bun.sleep(wait)
      next = null
      return start()
    })()
    return next
  }

  return {
    liveness: () => ({ status: 'ok' as const, version: VERSION }),
    readiness,
  }
}

export type HealthService = ReturnType<typeof createHealthService>
