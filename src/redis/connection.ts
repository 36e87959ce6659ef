// The one connection to Redis (ALTTEXT_REDIS_URL), shared by the rate limits and the sign-in slow-down,
// with Bun's own client. Every check runs against a deadline (ALTTEXT_REDIS_TIMEOUT_MS); when it fails, or
// while Redis is held to be down, the caller's per-replica fallback decides at once. An outage is logged
// once when it starts and once when it ends, and each check decided by the fallback is counted (/metrics).
// After a failure Redis is held down for REDIS_RETRY_MS, then a new connection and one command within the
// checks' deadline probe it; a failed probe, or an outage soon after the last one ended, doubles the wait
// (up to REDIS_MAX_RETRY_MS). So a Redis slower than the deadline is one long outage, not hundreds of short
// ones, and no request waits for a probe.
import { createHmac } from 'node:crypto'
import { RedisClient } from 'bun'
import type { Logger } from '../shared/logger'
import type { MaybePromise } from '../shared/maybe-promise'
import { REDIS_MAX_RETRY_MS, REDIS_RETRY_MS, REDIS_TIMEOUT_MS } from '../shared/limits'

/** What a check decided by the fallback was for (the label of alttext_rate_limit_fallback_total). */
export type FallbackKind = 'rate_limit' | 'slow_down'
export const FALLBACK_KINDS: FallbackKind[] = ['rate_limit', 'slow_down']

/** A Lua script, sent by its SHA-1 (EVALSHA) and as text only when the server does not know it yet. */
export type LuaScript = { source: string; sha: string }

export const luaScript = (source: string): LuaScript => ({ source, sha: new Bun.CryptoHasher('sha1').update(source).digest('hex') })

export type ScriptRunner = (script: LuaScript, keys: string[], args: (string | number)[]) => Promise<unknown>

export type RedisConnectionOptions = {
  url: string
  logger: Logger
  /** One check decided by this replica alone because Redis did not answer. */
  onFallback: (kind: FallbackKind) => void
  /** A check's deadline (tests on a busy machine raise it; a hanging Redis holds a request this long at most). */
  timeoutMs?: number
  /** How long Redis is held down after a failure before it is probed again (the first wait; see the top of this file). */
  retryMs?: number
  /** The longest such wait; by default 6 × retryMs. */
  maxRetryMs?: number
  /** The monotonic clock, in ms, that times the waits (tests move it). */
  clock?: () => number
}

export type RedisConnection = {
  /**
   * `work` on Redis within the deadline; `local` instead, at once, while Redis is known to be down, or after
   * `work` failed or ran out of time (a value, not a promise, in the first case: no wait while down).
   */
  attempt<T>(kind: FallbackKind, work: (run: ScriptRunner) => Promise<T>, local: () => T): MaybePromise<T>
  /** For /ready: a write within `timeoutMs`; never names the address. */
  check(timeoutMs: number): Promise<{ ok: boolean; detail: string }>
  close(): void
}

const PROBE_KEY = 'alttext:probe'

const message = (error: unknown) => (error instanceof Error ? error.message : String(error))

class RedisTimeout extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`)
  }
}

/** `promise`, or a RedisTimeout after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisTimeout(ms)), ms)
  })
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}

/** Turns a client address or an email into the part of a Redis key that stands for it. */
export type KeyHasher = (value: string) => string

/**
 * Addresses and emails are never stored in Redis as they are: a key or member holds an HMAC-SHA-256 of
 * them, keyed with the credentials of ALTTEXT_REDIS_URL, a secret every replica already shares (a user
 * and password naming the same server; the host may be written differently). Without a password the
 * hash still hides them from a casual look but not from whoever knows that.
 */
export function redisKeyHasher(url: string): KeyHasher {
  const parsed = URL.parse(url)
  const secret = `alttext redis keys\n${decodeURIComponent(parsed?.username ?? '')}\n${decodeURIComponent(parsed?.password ?? '')}`
  return (value) => createHmac('sha256', secret).update(value).digest('base64url')
}

/** Where Redis is, for the operator log: host and port, never the user or password. */
export function redisAddress(url: string): string {
  const parsed = URL.parse(url)
  return parsed === null ? 'redis' : `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}

export function createRedisConnection(options: RedisConnectionOptions): RedisConnection {
  const { url, logger, onFallback } = options
  const timeoutMs = options.timeoutMs ?? REDIS_TIMEOUT_MS
  const retryMs = options.retryMs ?? REDIS_RETRY_MS
  const maxRetryMs = options.maxRetryMs ?? retryMs * (REDIS_MAX_RETRY_MS / REDIS_RETRY_MS)
  const clock = options.clock ?? (() => performance.now())
  const address = redisAddress(url)

  let client: RedisClient
  /** `connecting`: the first connection is being made (checks wait for it, within their deadline). */
  let state: 'connecting' | 'up' | 'down' = 'connecting'
  let connected: Promise<void>
  let downSince = 0
  /** When Redis last came back (for the back-off: an outage soon after continues it), and the current wait. */
  let upSince = Number.NEGATIVE_INFINITY
  let holdMs = 0
  /** While down: when the next probe may start. */
  let probeAt = 0
  let fallbacks = 0
  let retryTimer: ReturnType<typeof setTimeout> | null = null
  let probing = false
  let closed = false

  // Bun's own reconnecting and offline queue are off: a command sent while the connection is lost fails at
  // once (the fallback decides), and this owner alone makes a new connection.
  const newClient = () => {
    const made = new RedisClient(url, {
      connectionTimeout: Math.max(timeoutMs, 1000),
      autoReconnect: false,
      enableOfflineQueue: false,
    })
    made.onclose = (error) => {
      if (made === client && state === 'up') down(error ?? new Error('connection closed'))
    }
    return made
  }

  const runner =
    (on: RedisClient): ScriptRunner =>
    async (script, keys, args) => {
      try {
        return await on.evalsha(script.sha, keys.length, ...keys, ...args)
      } catch (error) {
        // The server forgets scripts on restart or SCRIPT FLUSH: EVAL sends the text and caches it again.
        if (!message(error).startsWith('NOSCRIPT')) throw error
        return on.eval(script.source, keys.length, ...keys, ...args)
      }
    }

  const probe = async (on: RedisClient, ms: number) => {
    await within(on.send('SET', [PROBE_KEY, '1', 'PX', '10000']), ms)
  }

  const down = (error: unknown) => {
    if (closed || state === 'down') return
    const now = clock()
    // Down again soon after it came back: the wait goes on doubling; after a quiet spell it starts over.
    holdMs = now - upSince < maxRetryMs && holdMs > 0 ? Math.min(2 * holdMs, maxRetryMs) : retryMs
    state = 'down'
    downSince = now
    fallbacks = 0
    logger.warn('Redis cannot be reached: rate limits and the sign-in slow-down hold per replica until it answers', {
      redis: address,
      error: message(error),
    })
    // Anything still in flight on a connection that stopped answering fails now and falls back.
    client.close()
    holdFor(holdMs)
  }

  const up = (made: RedisClient) => {
    client = made
    const wasDown = state === 'down'
    state = 'up'
    upSince = clock()
    if (wasDown) {
      logger.info('Redis answers again: rate limits and the sign-in slow-down are shared by every replica again', {
        redis: address,
        down_ms: Math.round(clock() - downSince),
        fallbacks,
      })
    }
  }

  /** No probe before `ms` from now: a timer starts it then, or the first check after it (whichever comes first). */
  const holdFor = (ms: number) => {
    probeAt = clock() + ms
    schedule(ms)
  }

  const schedule = (delay: number) => {
    if (closed) return
    if (retryTimer !== null) clearTimeout(retryTimer)
    retryTimer = setTimeout(() => {
      retryTimer = null
      void retry()
    }, delay)
    retryTimer.unref()
  }

  const retry = async () => {
    if (closed || state !== 'down' || probing) return
    const early = probeAt - clock()
    if (early > 0) return schedule(early)
    if (retryTimer !== null) clearTimeout(retryTimer)
    retryTimer = null
    probing = true
    const made = newClient()
    try {
      await within(made.connect(), Math.max(timeoutMs, 1000))
      // One command within the checks' own deadline: a Redis too slow for them is not trusted again.
      await probe(made, timeoutMs)
      probing = false
      if (closed) return made.close()
      up(made)
    } catch {
      probing = false
      made.close()
      holdMs = Math.min(2 * holdMs, maxRetryMs)
      holdFor(holdMs)
    }
  }

  client = newClient()
  connected = client.connect().then(
    () => {
      if (!closed && state === 'connecting') up(client)
    },
    (error: unknown) => down(error),
  )

  const fallBack = <T>(kind: FallbackKind, local: () => T): T => {
    fallbacks++
    onFallback(kind)
    return local()
  }

  return {
    attempt(kind, work, local) {
      if (state === 'down' || closed) {
        if (state === 'down' && !probing && clock() >= probeAt) void retry()
        return fallBack(kind, local)
      }
      const on = client
      const pending = state === 'connecting' ? connected.then(() => work(runner(on))) : work(runner(on))
      return within(pending, timeoutMs).catch((error: unknown) => {
        // A failure of the connection this check used (a newer one may already be up), also while the
        // first connection is still being made: a Redis that accepts but never answers is an outage too.
        if (on === client) down(error)
        return fallBack(kind, local)
      })
    },

    async check(ms) {
      if (state === 'down') return { ok: false, detail: 'cannot be reached' }
      const on = client
      try {
        await within(connected, ms)
        await probe(on, ms)
        return { ok: true, detail: 'writable' }
      } catch (error) {
        if (on === client) down(error)
        return { ok: false, detail: error instanceof RedisTimeout ? `no answer within ${ms} ms` : 'cannot be reached' }
      }
    },

    close() {
      closed = true
      if (retryTimer !== null) clearTimeout(retryTimer)
      client.close()
    },
  }
}
