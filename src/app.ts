// The composition root: builds every module from the config, wires them, and starts or stops the server.
import { Elysia } from 'elysia'
import type { Server } from 'bun'
import type { Config } from './config'
import { createCreditLedger } from './credits/service'
import { errorHandling } from './http/errors'
import { startHttpServer, type EndpointLimits } from './http/server'
import { createSlidingWindowLimiter, type RateLimiter } from './limiter/limiter'
import { createLogMailer, createSmtpMailer, type Mailer } from './mail/mailer'
import { createOllamaProvider } from './model-provider/ollama'
import type { ModelProvider } from './model-provider/provider'
import { accountsRoutes } from './modules/accounts'
import { createAccountsService, type PasswordHasher } from './modules/accounts/service'
import { altTextRoutes } from './modules/alt-text'
import type { AltTextService } from './modules/alt-text/service'
import { createActivityRecorder } from './modules/auth/activity'
import { createAuthService } from './modules/auth/service'
import { docsRoutes } from './modules/docs'
import { healthRoutes } from './modules/health'
import { createHealthService } from './modules/health/service'
import { keysRoutes } from './modules/keys'
import { createKeysService } from './modules/keys/service'
import { usageRoutes } from './modules/usage'
import { createUsageService } from './modules/usage/service'
import { createImageIntake, missingWorkers, type HostResolver, type ImageIntakeOptions } from './intake'
import { createGenerationQueue } from './modules/alt-text/queue'
import { createAltTextService } from './modules/alt-text/service'
import { createLogger, type Logger } from './shared/logger'
import { createSqliteStore } from './store/sqlite'
import type { Store } from './store/types'

/** The spec's request timeout: the whole alt-text request, image fetch and model included. */
export const GENERATION_DEADLINE_MS = 15_000

export const RATE_LIMITS: EndpointLimits = {
  perEndpoint: { 'POST /api/register': 5, 'POST /api/login': 5, 'POST /api/forgot-password': 5 },
  fallback: 60,
  exempt: new Set(['/health', '/ready']),
}

/** Parts a test or an embedding may replace; everything else comes from the config. */
export type Overrides = {
  logger?: Logger
  store?: Store
  mailer?: Mailer
  modelProvider?: ModelProvider
  altText?: AltTextService
  /** Time source for expiry, periods and limits (tests move it). */
  clock?: () => number
  passwords?: PasswordHasher
  /** Name resolution for image hosts (tests map names to loopback so no DNS query leaves the machine). */
  resolveHost?: HostResolver
  /** Intake limits a test sets small (pixel budgets, per-account caps, timeouts). */
  intakeOptions?: Partial<ImageIntakeOptions>
  /** The whole alt-text request's deadline; tests shorten it (the service always uses 15 s). */
  generationDeadlineMs?: number
  /** Cap on tracked (address, endpoint) windows of the rate limiter. */
  rateLimitMaxEntries?: number
}

export function buildApp(config: Config, overrides: Overrides = {}) {
  const logger = overrides.logger ?? createLogger()
  const store = overrides.store ?? createSqliteStore(config.dbPath)
  const mailer = overrides.mailer ?? (config.smtpUrl ? createSmtpMailer(config.smtpUrl, config.mailFrom) : createLogMailer(logger))
  const modelProvider = overrides.modelProvider ?? createOllamaProvider({ host: config.ollamaHost, model: config.model })

  const clock = overrides.clock ?? Date.now
  const credits = createCreditLedger(store.credits, config.freeCredits)
  const activity = createActivityRecorder(store.activity, logger)
  const auth = createAuthService(store.keys, activity, clock)
  const accounts = createAccountsService({
    store,
    credits,
    mailer,
    logger,
    publicUrl: config.publicUrl,
    lastUsed: activity.lastUsed,
    clock,
    keysRevoked: auth.forget,
    passwords: overrides.passwords,
  })
  const keys = createKeysService({ store, credits, auth, lastUsed: activity.lastUsed, clock })
  const usage = createUsageService(credits, activity, clock)
  const health = createHealthService(store, modelProvider)
  const intake = createImageIntake({
    allowPrivateHosts: config.allowPrivateImageHosts,
    extraCaPem: config.extraCaPem,
    resolve: overrides.resolveHost,
    maxSide: config.imageMaxSide,
    ...overrides.intakeOptions,
  })
  const queue = createGenerationQueue({ concurrency: config.modelConcurrency })
  const altText: AltTextService =
    overrides.altText ??
    createAltTextService({
      intake,
      model: modelProvider,
      credits,
      cache: store.cache,
      queue,
      logger,
      clock,
      cacheTtlMs: config.cacheTtlDays * 86_400_000,
      deadlineMs: overrides.generationDeadlineMs ?? GENERATION_DEADLINE_MS,
    })

  const app = new Elysia({ normalize: true })
    .use(errorHandling(config.publicUrl, logger))
    .use(healthRoutes(health, config.publicUrl))
    .use(docsRoutes(config.publicUrl))
    .use(accountsRoutes(accounts))
    .use(keysRoutes(keys))
    .use(usageRoutes(usage))
    .use(altTextRoutes(altText))

  const purgeCache = () => store.cache.purgeExpired(clock()).catch((error: unknown) => logger.warn('cache purge failed', { error: String(error) }))
  void purgeCache()
  const purger = setInterval(() => void purgeCache(), 3_600_000)
  purger.unref()

  const close = async () => {
    clearInterval(purger)
    await activity.stop()
    await intake.close()
    mailer.close()
    store.close()
  }

  return { app, store, logger, mailer, modelProvider, auth, queue, close }
}

export type RunningService = { server: Server<undefined>; url: string; limiter: RateLimiter | null; stop(): Promise<void> }

export function startService(config: Config, overrides: Overrides = {}): RunningService {
  const built = buildApp(config, overrides)
  const { app, logger } = built
  const limiter = config.rateLimits ? createSlidingWindowLimiter({ maxEntries: overrides.rateLimitMaxEntries, clock: overrides.clock }) : null
  const sweeper = limiter ? setInterval(() => limiter.sweep(), 30_000) : null
  sweeper?.unref()

  app.compile()
  const routes = new Set(app.routes.map((r) => `${r.method} ${r.path}`))
  // The routes that declare the ApiKey security scheme are the ones that need a key.
  const authenticatedRoutes = new Set(
    app.routes.filter((r) => ((r.hooks.detail as { security?: unknown[] } | undefined)?.security ?? []).length > 0).map((r) => `${r.method} ${r.path}`),
  )
  const server = startHttpServer({
    fetch: app.fetch,
    routes,
    authenticatedRoutes,
    authenticate: (request) => built.auth.authenticate(request.headers.get('x-api-key')),
    hostname: config.host,
    port: config.port,
    publicUrl: config.publicUrl,
    trustProxyHops: config.trustProxyHops,
    limiter,
    limits: RATE_LIMITS,
    logger,
  })
  const url = `http://${server.hostname?.includes(':') ? `[${server.hostname}]` : server.hostname}:${server.port}`

  const missing = missingWorkers()
  if (missing.length > 0)
    logger.warn('worker entrypoints missing from this build: images are fetched on the main thread and GIFs cannot be decoded', { missing })
  if (!config.rateLimits) logger.warn('rate limits are OFF (ALTTEXT_RATE_LIMITS=off): use this only for benchmarks')
  if (built.mailer.kind === 'log') logger.warn('no ALTTEXT_SMTP_URL: password-reset links will be written to this log for the operator')
  logger.info('listening', { url, port: server.port, db: config.dbPath, model: config.model, ollama: config.ollamaHost })

  let stopping: Promise<void> | null = null
  return {
    server,
    url,
    limiter,
    stop: () =>
      (stopping ??= (async () => {
        if (sweeper) clearInterval(sweeper)
        await server.stop() // lets in-flight requests finish
        await built.close()
        logger.info('stopped')
      })()),
  }
}
