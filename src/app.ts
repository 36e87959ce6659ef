// The composition root: builds every module from the config, wires them into one Elysia app, and starts or
// stops the server. Everything HTTP (request context, limits, authentication, bodies, errors) is a plugin here.
import type { Server } from 'bun'
import { isIP } from 'node:net'
import { Elysia } from 'elysia'
import { type Config, isUnspecifiedIpv6 } from './config'
import { createCreditLedger } from './credits/service'
import { jsonBodies } from './http/body'
import { UNKNOWN_CLIENT } from './http/client-address'
import { createRequestRegistry, requestContext } from './http/context'
import { corsHeaders, corsPreflight } from './http/cors'
import { createOriginCheck } from './http/origin'
import { errorHandling } from './http/errors'
import { createAdmission, rateLimits } from './http/rate-limit'
import { createTextReader, ocrAvailable, type TextReader } from './ocr'
import { createImageIntake, type HostResolver, type ImageIntakeOptions, missingWorkers, systemResolver, trustedCaList } from './intake'
import { createSlidingWindowLimiter, type RateCheck, type RateLimiter } from './http/limiter'
import { createLogMailer, createSmtpMailer, type Mailer } from './modules/accounts/mailer'
import { createModelHostPool } from './model-provider'
import type { PoolBackoff } from './model-provider/pool'
import type { ModelProvider } from './model-provider/provider'
import { accountSettingsRoutes, accountsRoutes } from './modules/accounts'
import { watchAccountChanges } from './modules/accounts/changes'
import { createAccountsService, type PasswordHasher } from './modules/accounts/service'
import { createLoginSlowDown } from './modules/accounts/slow-down'
import { altTextRoutes, OWN_BODY_ROUTES } from './modules/alt-text'
import { createGenerationQueue } from './modules/alt-text/queue'
import { type AltTextService, createAltTextService } from './modules/alt-text/service'
import { REVIEW_BODY_ROUTES, reviewRoutes } from './modules/review'
import { createReviewService } from './modules/review/service'
import { authPlugin } from './modules/auth'
import { BATCH_BODY_ROUTES, batchesRoutes } from './modules/batches'
import { createBatchRunner } from './modules/batches/runner'
import { createBatchesService, type PendingImageLimits } from './modules/batches/service'
import { webhookRoutes } from './modules/webhooks'
import { createWebhookService } from './modules/webhooks/service'
import { createActivityRecorder } from './modules/auth/activity'
import { createAuthService } from './modules/auth/service'
import { consoleRoutes } from './modules/console'
import { docsRoutes } from './modules/docs'
import { livenessRoutes, readinessRoutes } from './modules/health'
import { metricsRoutes } from './modules/metrics'
import { createMetricsService } from './modules/metrics/service'
import { createHealthService } from './modules/health/service'
import { keysRoutes } from './modules/keys'
import { orgRoutes } from './modules/orgs'
import { createOrgsService } from './modules/orgs/service'
import { SUGGESTION_BODY_ROUTES, suggestionRoutes } from './modules/suggestions'
import { createSuggestionsService } from './modules/suggestions/service'
import { createKeysService } from './modules/keys/service'
import { sessionRoutes } from './modules/sessions'
import { createSessionsService } from './modules/sessions/service'
import { usageRoutes } from './modules/usage'
import { createUsageService } from './modules/usage/service'
import { historyRoutes } from './modules/history'
import { createHistoryService, type HistoryService } from './modules/history/service'
import { createLogger, type Logger } from './shared/logger'
import { createSystemScheduler, type Scheduler } from './shared/scheduler'
import { createRedisConnection, redisAddress, redisKeyHasher } from './redis/connection'
import { createRedisRateLimiter, sharedRateCheck } from './redis/rate-limiter'
import { createRedisSlowDown } from './redis/slow-down'
import { GENERATION_DEADLINE_MS, MAX_PENDING_BATCH_IMAGE_BYTES, MAX_PENDING_BATCH_IMAGE_BYTES_PER_ACCOUNT, UPLOAD_RECEIVE_SECONDS } from './shared/limits'
import { describeUrl } from './store/postgres/connection'
import { createPostgresStore, missingOnPostgres, type PostgresStoreOptions } from './store/postgres/store'
import { createSqliteStore } from './store/sqlite/store'
import type { Store } from './store/contract'

/** Parts a test or an embedding may replace; everything else comes from the config. */
export type Overrides = {
  logger?: Logger
  store?: Store
  mailer?: Mailer
  modelProvider?: ModelProvider
  /** Backoff of a model host taken out, before its first probe and at most (tests shorten it). */
  modelHostBackoff?: Partial<PoolBackoff>
  altText?: AltTextService
  /** Reads the text in images in place of the one ALTTEXT_OCR makes (the caller owns and closes it); null: none, as ALTTEXT_OCR=off. */
  textReader?: TextReader | null
  /** Time source for expiry, periods and limits (tests move it). */
  clock?: () => number
  /** The timers of background work: flushes, polls, lease renewals, retries (tests move a manual one, often with its now() as the clock). */
  scheduler?: Scheduler
  passwords?: PasswordHasher
  /** Name resolution for image hosts (tests map names to loopback so no DNS query leaves the machine). */
  resolveHost?: HostResolver
  /** Intake limits a test sets small (pixel budgets, per-account caps, timeouts). */
  intakeOptions?: Partial<ImageIntakeOptions>
  /** The whole alt-text request's deadline; tests shorten it (the service always uses 15 s). */
  generationDeadlineMs?: number
  /** The model time one review may use (the service always uses MAX_REVIEW_MODEL_MS); tests shorten it. */
  reviewModelBudgetMs?: number
  /** Cap on tracked (address, endpoint) windows of the rate limiter. */
  rateLimitMaxEntries?: number
  /** Redis's deadline per check and its retry period while down (tests on a busy machine raise the first, shorten the second). */
  redisTimeoutMs?: number
  redisRetryMs?: number
  /** How long a batch body may take to arrive (tests shorten it; the service always uses UPLOAD_RECEIVE_SECONDS). */
  batchReceiveMs?: number
  /** Bounds of uploaded batch images waiting in the database (tests make them small; see limits.ts). */
  batchImageLimits?: Partial<PendingImageLimits>
  /** Waits of the batch runner before retrying an item after a transient failure (tests shorten them). */
  batchRetryDelaysMs?: number[]
  /** At most this long between the batch runner's tries of an item whose credit others hold (tests shorten it). */
  batchHeldWaitMs?: number
  /** How often the batch runner looks for work without a wake-up, such as items whose lease ended (tests shorten it). */
  batchPollMs?: number
  /** Webhook timing tests shorten: the waits before retries, an attempt's timeout, the dispatcher's poll. */
  webhookRetryDelaysMs?: number[]
  webhookTimeoutMs?: number
  webhookPollMs?: number
}

/**
 * Opens the store the configuration names: the SQLite file (one process per file, enforced by its lock),
 * or PostgreSQL (any number of replicas; connecting, checking the server and migrating are asynchronous,
 * so it is opened before the service is built and handed to it, which then owns and closes it).
 * PostgreSQL is refused while a SQLite migration of this binary has no PostgreSQL counterpart
 * (missingOnPostgres), before anything is opened: a service that answers some requests and fails others
 * would be worse than one that does not start. `clock`: see PostgresStoreOptions (tests that move time).
 */
export async function openStore(config: Config, options: Pick<PostgresStoreOptions, 'clock' | 'feed'> = {}): Promise<Store> {
  if (config.databaseUrl === undefined) return createSqliteStore(config.dbPath)
  const missing = missingOnPostgres()
  if (missing.length > 0)
    throw new Error(
      `ALTTEXT_DATABASE_URL: PostgreSQL is not complete in this version; not on it yet: ${missing.join(', ')}. Unset ALTTEXT_DATABASE_URL to serve from the SQLite file of ALTTEXT_DB`,
    )
  try {
    return await createPostgresStore(config.databaseUrl, options)
  } catch (error) {
    throw new Error(`ALTTEXT_DATABASE_URL: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** The SQLite store, opened while the service is built; PostgreSQL must come through openStore. */
function sqliteStore(config: Config): Store {
  if (config.databaseUrl !== undefined) throw new Error('ALTTEXT_DATABASE_URL: open PostgreSQL with openStore() and pass it as the store')
  return createSqliteStore(config.dbPath)
}

export function buildApp(config: Config, overrides: Overrides = {}) {
  const logger = overrides.logger ?? createLogger()
  const store = overrides.store ?? sqliteStore(config)
  const mailer = overrides.mailer ?? (config.smtpUrl ? createSmtpMailer(config.smtpUrl, config.mailFrom) : createLogMailer(logger))
  // The one owner of the model hosts' probes: closed in close().
  const modelPool = overrides.modelProvider ? null : createModelHostPool(config, { logger, backoff: overrides.modelHostBackoff, onChange: () => queue.wake() })
  const modelProvider: ModelProvider = overrides.modelProvider ?? modelPool!

  const clock = overrides.clock ?? Date.now
  const scheduler = overrides.scheduler ?? createSystemScheduler()
  // The one owner of the Redis connection (ALTTEXT_REDIS_URL): closed in close(). Its checks fall back to
  // this process's own limiter and slow-down, counted in /metrics.
  const redis = config.redisUrl
    ? createRedisConnection({
        url: config.redisUrl,
        logger,
        onFallback: (kind) => metrics.rateLimitFallback(kind),
        timeoutMs: overrides.redisTimeoutMs ?? config.redisTimeoutMs,
        retryMs: overrides.redisRetryMs,
      })
    : null
  const localSlowDown = createLoginSlowDown()
  // A test's clock drives Redis's scripts too; the service always leaves them to the Redis server's clock.
  // Redis keys hold keyed hashes of addresses and emails, never the values (redisKeyHasher).
  const hashKey = config.redisUrl ? redisKeyHasher(config.redisUrl) : null
  const slowDown = redis && hashKey ? createRedisSlowDown(redis, localSlowDown, { clock: overrides.clock, hashKey }) : localSlowDown
  // Memory may stand in for the database only while the change feed is heard (accountChanges, below).
  const cachesTrusted = () => accountChanges.trusted()
  const credits = createCreditLedger(store.credits, config.freeCredits, clock, cachesTrusted)
  const activity = createActivityRecorder(store.activity, logger, { scheduler })
  const history = createHistoryService({ store: store.history, logger, clock, scheduler })
  const auth = createAuthService(store.keys, activity, clock, { trusted: cachesTrusted })
  const accountRemoved = (accountId: number) => {
    auth.forget(accountId)
    credits.forget(accountId)
    activity.forget(accountId)
    history.forget(accountId)
  }
  const accounts = createAccountsService({
    store,
    credits,
    mailer,
    logger,
    publicUrl: config.publicUrl,
    registration: config.registration,
    verifyEmail: config.verifyEmail,
    lastUsed: activity.lastUsed,
    clock,
    keysRevoked: auth.forget,
    accountRemoved,
    accountVerified: auth.forget,
    passwords: overrides.passwords,
    slowDown,
  })
  // The one owner of the poll that brings other processes' account changes (alttext admin) into memory.
  const accountChanges = watchAccountChanges({
    feed: store.changes,
    logger,
    changed: (accountId, change) => {
      if (change === 'deleted') return accountRemoved(accountId)
      // A charge (another replica's, or this one's heard back) changes the counts only: the keys stay cached.
      if (change === 'charged') return credits.forget(accountId)
      auth.forget(accountId)
      credits.forget(accountId)
    },
    lost: () => {
      auth.forget()
      credits.forget()
    },
  })
  const sessions = createSessionsService({ store, accounts, logger, clock, publicUrl: config.publicUrl })
  const keys = createKeysService({ store, credits, auth, lastUsed: activity.lastUsed, clock })
  const orgs = createOrgsService({ store, credits, auth, mailer, logger, publicUrl: config.publicUrl, clock })
  const usage = createUsageService(credits, activity, clock)
  const health = createHealthService(store, modelProvider, {
    logger,
    hosts: modelPool?.hosts,
    redis: redis ? (timeoutMs) => redis.check(timeoutMs) : undefined,
    limitsPerReplica: config.limitsPerReplica,
    changes: accountChanges.check,
  })
  const intake = createImageIntake({
    allowPrivateHosts: config.allowPrivateImageHosts,
    extraCaPem: config.extraCaPem,
    resolve: overrides.resolveHost,
    maxSide: config.imageMaxSide,
    decodeBudgetBytes: config.decodeBudgetMb * 1024 * 1024,
    maxInFlightPerOwner: config.maxImagesPerAccount,
    ...overrides.intakeOptions,
  })
  const queue = createGenerationQueue({ concurrency: modelPool ? modelPool.capacity : config.modelConcurrency })
  // The one owner of the metrics registry (and its event-loop monitor): closed in close().
  const metrics = createMetricsService({
    token: config.metricsToken,
    sources: {
      queue: queue.stats,
      queueCapacity: modelPool ? modelPool.capacity : () => config.modelConcurrency,
      modelHosts: modelPool?.hostStates,
      counts: store.counts.counts,
    },
  })
  // The one owner of the OCR reader (ALTTEXT_OCR): its worker and models load on the first image read; closed in close().
  // A reader a test gives (overrides.textReader, null included) is the test's own.
  // Where the platform has no OCR build, the answers say so once here rather than in a warning per image.
  if (config.ocr && !ocrAvailable())
    logger.warn('no OCR on this platform: the model alone reads the text in images', { platform: `${process.platform}-${process.arch}` })
  const ownReader: TextReader | null =
    overrides.textReader === undefined && config.ocr && ocrAvailable() ? createTextReader({ modelsDir: config.ocrModels }) : null
  const textReader = overrides.textReader === undefined ? ownReader : overrides.textReader
  // The alt-text route and the judge of existing alt text share their parts (the judge's cache keys are its own).
  const generationDeps = {
    intake,
    textReader,
    model: modelProvider,
    credits: metrics.observeCredits(credits),
    cache: metrics.observeCache(store.cache),
    queue: metrics.observeQueue(queue),
    history,
    logger,
    clock,
    cacheTtlMs: config.cacheTtlDays * 86_400_000,
    cacheScope: config.cacheScope,
    deadlineMs: overrides.generationDeadlineMs ?? GENERATION_DEADLINE_MS,
  }
  const altTextService: AltTextService = overrides.altText ?? createAltTextService({ ...generationDeps, onLanguageRetry: metrics.languageRetry })
  // Its stage timings feed the generation histograms of /metrics.
  const altText = metrics.observeAltText(altTextService)
  // A decision queues its organisation's webhook delivery (in the store); the dispatcher sends it at once.
  const suggestions = createSuggestionsService({ store, altText, intake, logger, clock, onDecided: () => webhooks.wake() })
  const reviews = createReviewService({ ...generationDeps, modelBudgetMs: overrides.reviewModelBudgetMs })

  // The one owner of webhook deliveries: signs and sends the event of each ended batch with a webhook_url,
  // retrying with backoff (state in SQLite); the image fetcher's address policy and trust store apply.
  const webhooks = createWebhookService({
    store: store.webhooks,
    logger,
    clock,
    scheduler,
    view: (accountId, batchId) => batches.view(accountId, batchId),
    policy: { allowPrivateHosts: config.allowPrivateImageHosts, resolve: overrides.resolveHost ?? systemResolver },
    ca: trustedCaList(config.extraCaPem),
    retryDelaysMs: overrides.webhookRetryDelaysMs,
    timeoutMs: overrides.webhookTimeoutMs,
    leaseMs: config.batchLeaseSeconds * 1000,
    pollMs: overrides.webhookPollMs,
    onAttempt: metrics.webhookAttempt,
  })
  // The one owner of batch work: claims items in SQLite, runs them as background work of the model queue
  // (a few more under way than there are model slots, so images are ready when a slot frees), purges
  // ended batches after their retention time.
  const batchRunner = createBatchRunner({
    store: store.batches,
    orgs: store.orgs,
    suggestions: store.suggestions,
    altText,
    logger,
    clock,
    scheduler,
    inFlight: config.modelConcurrency * config.modelHosts.length * 2,
    leaseMs: config.batchLeaseSeconds * 1000,
    retentionDays: config.batchRetentionDays,
    retryDelaysMs: overrides.batchRetryDelaysMs,
    heldWaitMs: overrides.batchHeldWaitMs,
    pollMs: overrides.batchPollMs,
    onFinished: webhooks.wake,
    onItemRecorded: metrics.batchItemRecorded,
  })
  const batches = createBatchesService({
    store: store.batches,
    clock,
    pendingImages: {
      perAccountBytes: MAX_PENDING_BATCH_IMAGE_BYTES_PER_ACCOUNT,
      totalBytes: MAX_PENDING_BATCH_IMAGE_BYTES,
      ...overrides.batchImageLimits,
    },
    wake: batchRunner.wake,
    onFinished: webhooks.wake,
    checkWebhookUrl: webhooks.acceptUrl,
  })

  // This process's own limiter: the only one without Redis, the fallback with it.
  const limiter: RateLimiter | null = config.rateLimits
    ? createSlidingWindowLimiter({ maxEntries: overrides.rateLimitMaxEntries, clock: overrides.clock })
    : null
  const rateCheck: RateCheck | null =
    limiter === null
      ? null
      : redis && hashKey
        ? // A test's clock drives the script too; the service always leaves it to the Redis server's clock.
          sharedRateCheck(redis, createRedisRateLimiter({ clock: overrides.clock, hashKey }), limiter)
        : (clientKey, endpoint, limit) => limiter.check(clientKey, endpoint, limit)
  const requests = createRequestRegistry()
  const admit = createAdmission(rateCheck, requests)
  const origin = createOriginCheck(config.publicUrl)
  const authentication = authPlugin(auth, admit, sessions, origin, store.orgs)
  const clientOf = (request: Request) => requests.meta(request)?.client ?? UNKNOWN_CLIENT
  const limits = rateLimits(rateCheck, admit, requests, config.publicUrl, redis !== null)

  // Elysia finds the path in the URL itself; patches/elysia@*.patch makes that work for every Host a client
  // may send (`api`, none, or one Bun cannot parse, which leaves the URL relative).
  const app = new Elysia()
    .use(requestContext({ proxyTrust: { hops: config.trustProxyHops, proxies: config.trustedProxies }, logger, requests, served: metrics.served }))
    .use(corsHeaders(config.corsOrigins))
    .use(limits)
    .use(errorHandling(config.publicUrl, logger, requests))
    .use(jsonBodies([...OWN_BODY_ROUTES, ...REVIEW_BODY_ROUTES, ...BATCH_BODY_ROUTES, ...SUGGESTION_BODY_ROUTES]))
    // The probes are not limited per address (a load balancer polls from one); readiness bounds its own cost.
    .use(livenessRoutes(health))
    .use(readinessRoutes(health, config.publicUrl))
    .use(docsRoutes())
    .guard({ rateLimit: 'standard' }, (limited) =>
      limited
        .use(metricsRoutes(metrics, (request) => requests.meta(request)?.address ?? UNKNOWN_CLIENT))
        .use(accountsRoutes(accounts, limits, clientOf))
        .use(sessionRoutes({ sessions, authentication, limits, origin, clientOf }))
        .use(accountSettingsRoutes(accounts, limits, authentication, config.publicUrl, clientOf))
        .use(corsPreflight(config.corsOrigins))
        .use(keysRoutes(keys, authentication))
        .use(orgRoutes(orgs, keys, authentication, webhooks, clock))
        .use(suggestionRoutes(suggestions, authentication))
        .use(usageRoutes(usage, authentication))
        .use(historyRoutes(history, authentication))
        .use(altTextRoutes(altText, authentication))
        .use(reviewRoutes(reviews, authentication))
        .use(
          batchesRoutes(batches, altText, authentication, {
            reserve: intake.reserveBody,
            receiveMs: overrides.batchReceiveMs ?? UPLOAD_RECEIVE_SECONDS * 1000,
          }),
        )
        .use(webhookRoutes(webhooks, authentication))
        .use(consoleRoutes(sessions.cookie)),
    )

  const purgeCache = () => store.cache.purgeExpired(clock()).catch((error: unknown) => logger.warn('cache purge failed', { error: String(error) }))
  const purgeSessions = () => sessions.purgeExpired().catch((error: unknown) => logger.warn('session purge failed', { error: String(error) }))
  // Lapsed credit holds (of killed processes) count for nothing already; this only drops their rows.
  const purgeHolds = () => store.credits.purgeExpiredHolds(clock()).catch((error: unknown) => logger.warn('credit hold purge failed', { error: String(error) }))
  void purgeCache()
  void purgeSessions()
  void purgeHolds()
  const timers = [
    scheduler.setInterval(() => void purgeCache(), 3_600_000),
    scheduler.setInterval(() => void purgeSessions(), 3_600_000),
    scheduler.setInterval(() => void purgeHolds(), 3_600_000),
    ...(limiter ? [scheduler.setInterval(() => limiter.sweep(), 30_000)] : []),
  ]

  const close = async () => {
    for (const timer of timers) scheduler.clear(timer)
    accountChanges.close()
    await batchRunner.close()
    await webhooks.close()
    await activity.stop()
    await history.stop()
    await intake.close()
    await ownReader?.close()
    modelPool?.close()
    metrics.close()
    mailer.close()
    redis?.close()
    await store.close()
  }

  return { app, store, logger, mailer, modelProvider, auth, queue, limiter, requests, history, close }
}

export type RunningService = {
  app: ReturnType<typeof buildApp>['app']
  server: Server<undefined>
  url: string
  limiter: RateLimiter | null
  /** The alt-text outcome recorder and history (tests record through it). */
  history: HistoryService
  stop(): Promise<void>
}

/** What the start-up log says about who can reach the service, by the HOST it listens on. */
function reachOf(config: Config): { url: string; reach: string } {
  const host = config.host.toLowerCase()
  const everyAddress = host === '0.0.0.0' || isUnspecifiedIpv6(host)
  const loopback = host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'))
  // The address a person opens on this machine: `localhost` reaches the loopback pair and every-address listeners alike.
  const name = host === 'localhost' || everyAddress ? 'localhost' : isIP(host) === 6 ? `[${config.host}]` : config.host
  const reach = loopback
    ? 'only this machine can reach it; set HOST=:: to listen on every address'
    : everyAddress
      ? 'every address of this machine: other machines can reach it'
      : `other machines can reach it at ${config.host}`
  return { url: `http://${name}:${config.port}/`, reach }
}

/** What opening the database did, for the operator: "database schema 15→17: applied migrations 16..17". */
function schemaLine({ version, applied }: { version: number; applied: number[] }): string {
  if (applied.length === 0) return `database schema at ${version}: no migrations`
  const first = Math.min(...applied)
  const last = Math.max(...applied)
  return `database schema ${first - 1}→${version}: applied ${first === last ? `migration ${first}` : `migrations ${first}..${last}`}`
}

/** Address errors that mean "not on this machine" (no IPv6 loopback, say), not "taken by another process". */
const MISSING_ADDRESS = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EINVAL'])
/** A free port (PORT=0) taken on the second address meanwhile: pick another this often before giving up. */
const FREE_PORT_ATTEMPTS = 5

export function startService(config: Config, overrides: Overrides = {}): RunningService {
  const built = buildApp(config, overrides)
  const { app, logger } = built
  const options = {
    development: false,
    // Elysia's default lets a second process bind the same port and take half the connections.
    reusePort: false,
    // `::` takes IPv4 clients too (as IPv4-mapped addresses), whatever the system's default.
    ipv6Only: false,
    // Elysia's default, given to every socket alike.
    idleTimeout: 30,
    // JSON bodies stop at their own limit with a structured 413; Bun's bare 413 only needs to stay out of the way.
    maxRequestBodySize: 1024 * 1024 * 1024,
  }
  const listenFirst = (hostname: string) => {
    try {
      app.listen({ hostname, port: config.port, ...options })
      return hostname
    } catch (error) {
      // `::` fails on a machine without IPv6 (or where another process holds IPv6 alone): IPv4 still serves.
      if (config.ipv4Fallback === null) throw error
      logger.warn('cannot listen on every IPv6 address: listening on IPv4 only', { host: config.ipv4Fallback, error: String(error) })
      app.listen({ hostname: config.ipv4Fallback, port: config.port, ...options })
      return config.ipv4Fallback
    }
  }
  // One socket binds one address: the others (::1 beside 127.0.0.1) get sockets of their own on the same
  // port, serving the same app (a request's peer address is read from the request, whichever socket took it).
  const [first, ...others] = config.listenAddresses as [string, ...string[]]
  let more: Server<undefined>[] = []
  let addresses: string[] = []
  for (let attempt = 1; ; attempt++) {
    try {
      addresses = [listenFirst(first)]
    } catch (error) {
      void built.close()
      throw error
    }
    more = []
    const port = (app.server as Server<undefined>).port
    let retry = false
    for (const hostname of others) {
      try {
        more.push(Bun.serve({ hostname, port, ...options, fetch: (request) => app.fetch(request) }))
        addresses.push(hostname)
      } catch (error) {
        const code = (error as { code?: unknown }).code
        if (typeof code === 'string' && MISSING_ADDRESS.has(code)) {
          logger.warn(`cannot listen on ${hostname} (not an address of this machine): listening on ${addresses.join(' and ')} only`, { error: String(error) })
          continue
        }
        for (const server of [app.server as Server<undefined>, ...more]) void server.stop(true)
        if (code === 'EADDRINUSE' && config.port === 0 && attempt < FREE_PORT_ATTEMPTS) {
          retry = true
          break
        }
        void built.close()
        // Another process on that address would get the browsers that try it first for `localhost`.
        if (code === 'EADDRINUSE')
          throw new Error(`port ${port} is in use on ${hostname} by another process: stop it, or set HOST to one address (HOST=${first})`)
        throw error
      }
    }
    if (!retry) break
  }
  const server = app.server as Server<undefined>
  const url = `http://${server.hostname?.includes(':') ? `[${server.hostname}]` : server.hostname}:${server.port}`
  const shown = reachOf({ ...config, port: server.port ?? config.port })

  const missing = missingWorkers()
  if (missing.length > 0)
    logger.warn('worker entrypoints missing from this build: images are fetched on the main thread, GIFs cannot be decoded, OCR cannot run', { missing })
  if (!config.rateLimits) logger.warn('rate limits are OFF (ALTTEXT_RATE_LIMITS=off): use this only for benchmarks')
  if (config.redisUrl) logger.info('rate limits and the sign-in slow-down are shared through Redis', { redis: redisAddress(config.redisUrl) })
  if (config.limitsPerReplica)
    logger.warn('no ALTTEXT_REDIS_URL: rate limits and the sign-in slow-down hold per replica (5 sign-in attempts a minute on each); set it to share them')
  if (built.mailer.kind === 'log')
    logger.warn(`no ALTTEXT_SMTP_URL: password-reset${config.verifyEmail ? ' and email-verification' : ''} links will be written to this log for the operator`)
  // The database without the URL's user or password.
  const db = config.databaseUrl === undefined ? config.dbPath : `PostgreSQL ${describeUrl(config.databaseUrl)}`
  logger.info('listening', {
    url: shown.url,
    docs: `${shown.url}docs`,
    reach: shown.reach,
    addresses,
    port: server.port,
    db,
    model: config.model,
    model_hosts: config.modelHosts,
  })
  const schema = built.store.schema
  if (schema) logger.info(schemaLine(schema), { schema_version: schema.version, applied_migrations: schema.applied })
  logger.info('images sent to the model', { model: config.model, max_side: config.imageMaxSide, because: config.imageMaxSideReason })
  void built.modelProvider.health(AbortSignal.timeout(5000)).then((health) => {
    if (!health.ok) logger.warn('the model server is not ready: alt-text requests will fail until it is', { detail: health.detail })
  })

  let stopping: Promise<void> | null = null
  return {
    app,
    server,
    url,
    limiter: built.limiter,
    history: built.history,
    stop: () =>
      (stopping ??= (async () => {
        await Promise.all([app.stop(), ...more.map((other) => other.stop())]) // lets in-flight requests finish
        await built.requests.idle() // and write their log lines
        await built.close()
        logger.info('stopped')
      })()),
  }
}
