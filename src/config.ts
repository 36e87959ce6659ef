// The only module that reads the environment. Everything else receives a Config.
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import type { Cidr } from './intake/address'
import { DEFAULT_TRUSTED_PROXIES, parseTrustedProxies } from './http/client-address'
import { modelImageSide } from './shared/model-image-sizes'
import { REDIS_TIMEOUT_MS } from './shared/limits'
import { emailDomain } from './modules/accounts/registration'

/** Who may sign up with POST /api/register (ALTTEXT_REGISTRATION); `alttext admin accounts create` always may. */
export type RegistrationPolicy = { mode: 'open' } | { mode: 'closed' } | { mode: 'domains'; domains: string[] }

export type Config = {
  port: number
  /** HOST as set; unset: `localhost`, that is 127.0.0.1 and ::1 (only this machine reaches the service). */
  host: string
  /** The addresses listened on, on the same port: HOST's one, or 127.0.0.1 and ::1 for `localhost`. */
  listenAddresses: string[]
  /** Where to listen instead when `host` cannot be listened on: 0.0.0.0 for `::` (a machine without IPv6); null for any other HOST. */
  ipv4Fallback: string | null
  dbPath: string
  /** ALTTEXT_DATABASE_URL: PostgreSQL instead of the SQLite file (which is then ignored); unset: SQLite. May hold a password: never logged. */
  databaseUrl: string | undefined
  /** How long a replica's claim on a batch item or webhook attempt lasts unless renewed (ALTTEXT_BATCH_LEASE_SECONDS). */
  batchLeaseSeconds: number
  ollamaHost: string
  /** Model server base URLs (ALTTEXT_MODEL_HOSTS); by default OLLAMA_HOST alone. */
  modelHosts: string[]
  /** Which API the model server speaks: Ollama's native one, or OpenAI-compatible chat completions. */
  modelApi: 'ollama' | 'openai'
  /** Bearer token for the model server; never logged. */
  modelApiKey: string | undefined
  model: string
  modelConcurrency: number
  publicUrl: string
  smtpUrl: string | undefined
  mailFrom: string
  trustProxyHops: number
  trustedProxies: Cidr[]
  allowPrivateImageHosts: string[]
  freeCredits: number
  rateLimits: boolean
  /** ALTTEXT_REDIS_URL: rate limits and the sign-in slow-down shared by every replica; unset: kept in this process. May hold a password: never logged. */
  redisUrl: string | undefined
  /** ALTTEXT_REDIS_TIMEOUT_MS: how long a rate-limit or slow-down check waits for Redis before this replica decides alone. */
  redisTimeoutMs: number
  /** Several replicas (ALTTEXT_DATABASE_URL) and no Redis: each replica keeps its own limits, and the service says so. */
  limitsPerReplica: boolean
  extraCaCerts: string | undefined
  /** Extra CA bundle's PEM text, read at start (in-process use cannot rely on Bun reading the variable). */
  extraCaPem: string | undefined
  cacheTtlDays: number
  /** Whose cached answers an account may get: only its own (`account`), or every account's (`shared`). */
  cacheScope: 'account' | 'shared'
  /** Longest image side sent to the model: ALTTEXT_IMAGE_MAX_SIDE, else the model family's (shared/model-image-sizes.ts). */
  imageMaxSide: number
  /** Where imageMaxSide came from, for the start-up log. */
  imageMaxSideReason: string
  decodeBudgetMb: number
  maxImagesPerAccount: number
  /** Browser origins allowed to call the API with CORS: `*` for any, none by default. */
  corsOrigins: '*' | string[]
  /** Days an ended batch and its results are kept before they are deleted. */
  batchRetentionDays: number
  /** Bearer token for GET /metrics; unset: only loopback clients may scrape. Never logged. */
  metricsToken: string | undefined
  registration: RegistrationPolicy
  /** New accounts must follow a mailed link before they may do anything: always under `domains:`, on open sites with ALTTEXT_VERIFY_EMAIL=on. */
  verifyEmail: boolean
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`)
  }
}

export type Env = Record<string, string | undefined>

/** Every variable the service reads, for `--help` and the README. */
export const CONFIG_VARIABLES: { name: string; default: string; meaning: string }[] = [
  { name: 'PORT', default: '3000', meaning: 'listen port (0 picks a free port)' },
  {
    name: 'HOST',
    default: 'localhost',
    meaning: 'listen address: `localhost` is 127.0.0.1 and ::1, this machine only; `::` is every IPv6 and IPv4 address (0.0.0.0 where the machine has no IPv6)',
  },
  { name: 'ALTTEXT_DB', default: './data/alttext.db', meaning: 'SQLite file (directory created if missing)' },
  {
    name: 'ALTTEXT_DATABASE_URL',
    default: 'unset',
    meaning:
      'postgres://user:password@host:5432/db (also postgresql://, ?sslmode=): every durable fact in PostgreSQL 15+, for several replicas; ALTTEXT_DB is then ignored. Unset: embedded SQLite',
  },
  {
    name: 'ALTTEXT_BATCH_LEASE_SECONDS',
    default: '60',
    meaning: "how long a replica's claim on a batch item or webhook attempt lasts unless renewed; another replica takes a dead one's over after it (5-3600)",
  },
  { name: 'OLLAMA_HOST', default: 'http://127.0.0.1:11434', meaning: 'Ollama server, as the Ollama CLI reads it' },
  { name: 'ALTTEXT_MODEL', default: 'llava', meaning: 'vision model name' },
  {
    name: 'ALTTEXT_MODEL_API',
    default: 'ollama',
    meaning: '`ollama` (native API) or `openai` (OpenAI-compatible chat completions at OLLAMA_HOST/v1: vLLM, llama.cpp server, LM Studio, LocalAI)',
  },
  { name: 'ALTTEXT_MODEL_API_KEY', default: 'unset', meaning: 'bearer token for the model server (never logged)' },
  {
    name: 'ALTTEXT_MODEL_HOSTS',
    default: 'OLLAMA_HOST',
    meaning: 'comma list of model server base URLs; calls go to the least-loaded healthy one, a failing host is taken out and probed back in',
  },
  { name: 'ALTTEXT_MODEL_CONCURRENCY', default: '2', meaning: 'generations in flight at once per model host; the rest wait in a bounded queue' },
  { name: 'ALTTEXT_PUBLIC_URL', default: 'http://localhost:<PORT>', meaning: 'base of `docs` links and reset links' },
  { name: 'ALTTEXT_SMTP_URL', default: 'unset', meaning: 'mail relay for reset and verification links, e.g. smtp://user:pass@mail:587' },
  { name: 'ALTTEXT_MAIL_FROM', default: 'unset (alttext@<public host>)', meaning: 'sender address of reset mails' },
  { name: 'ALTTEXT_TRUST_PROXY', default: 'unset', meaning: 'trusted proxy hops for X-Forwarded-For (a whole number)' },
  {
    name: 'ALTTEXT_TRUSTED_PROXIES',
    default: 'loopback and private ranges',
    meaning: 'comma list of IPs and CIDRs whose X-Forwarded-For is believed (only with ALTTEXT_TRUST_PROXY)',
  },
  {
    name: 'ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS',
    default: 'unset',
    meaning: 'comma list of host names, IPs and CIDRs that images may come from although private or loopback',
  },
  { name: 'ALTTEXT_FREE_CREDITS', default: '50', meaning: 'credits per monthly period of the free plan' },
  { name: 'ALTTEXT_RATE_LIMITS', default: 'on', meaning: '`off` only for benchmarks; the service warns at start-up' },
  {
    name: 'ALTTEXT_REDIS_URL',
    default: 'unset',
    meaning:
      'redis://[user:password@]host:6379[/db] or rediss://: Redis 7+ or Valkey; rate limits and the sign-in slow-down are shared by every replica. Unset: kept per process',
  },
  {
    name: 'ALTTEXT_REDIS_TIMEOUT_MS',
    default: String(REDIS_TIMEOUT_MS),
    meaning:
      'with ALTTEXT_REDIS_URL: how long a rate-limit check waits for Redis (10-5000 ms); past it this replica decides alone, for 5 s at least, before one command probes Redis again',
  },
  { name: 'NODE_EXTRA_CA_CERTS', default: 'unset', meaning: 'extra CA bundle (PEM file) for image hosts; Bun reads it' },
  { name: 'ALTTEXT_CACHE_TTL_DAYS', default: '30', meaning: 'days a generated alt text stays cached (0 turns the cache off)' },
  {
    name: 'ALTTEXT_CACHE_SCOPE',
    default: 'account',
    meaning: '`account`: a cached answer serves only the account that paid for it; `shared`: one cache for every account (one organisation)',
  },
  {
    name: 'ALTTEXT_DECODE_BUDGET_MB',
    default: '512',
    meaning: 'memory for images being decoded at once (64-65536); more waits its turn, one image over it is refused',
  },
  { name: 'ALTTEXT_MAX_IMAGES_PER_ACCOUNT', default: '2', meaning: 'images one account may have fetched or prepared at once (1-64); more wait' },
  { name: 'ALTTEXT_BATCH_RETENTION_DAYS', default: '30', meaning: 'days an ended batch and its results are kept, then deleted (1-3650)' },
  {
    name: 'ALTTEXT_IMAGE_MAX_SIDE',
    default: 'per model, see docs/models.md',
    meaning: 'longest image side, in pixels, sent to the model (256-4096); unset: what the model family uses (1024 for models not in the table)',
  },
  {
    name: 'ALTTEXT_CORS_ORIGINS',
    default: 'unset (CORS off)',
    meaning: 'comma list of browser origins (https://cms.example.org) allowed to call the API with a key, or *; never with the session',
  },
  {
    name: 'ALTTEXT_METRICS_TOKEN',
    default: 'unset',
    meaning: 'bearer token for GET /metrics (Prometheus text format), at least 16 characters; unset: /metrics answers only loopback clients',
  },
  {
    name: 'ALTTEXT_REGISTRATION',
    default: 'open',
    meaning: '`open`, `closed` (accounts only by `alttext admin`), or `domains:a.org,b.org` (only emails at exactly these domains may sign up)',
  },
  {
    name: 'ALTTEXT_VERIFY_EMAIL',
    default: 'on for domains:, else off',
    meaning: '`on`: new accounts work once they follow a mailed link (always under `domains:`)',
  },
]

function wholeNumber(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim()
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`)
  const value = Number(raw)
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`)
  return value
}

/** A URL as it may be shown: its password replaced, so an error message never echoes a secret. */
function redacted(raw: string): string {
  return raw.replace(/:[^@/]*@/g, ':***@')
}

function httpUrl(name: string, raw: string, schemes: string[]): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(name, `must be a URL, got "${redacted(raw)}"`)
  }
  if (!schemes.includes(url.protocol)) {
    throw new ConfigError(name, `must use ${schemes.map((s) => s.replace(':', '')).join(' or ')}, got "${url.protocol.replace(':', '')}"`)
  }
  return url
}

/**
 * OLLAMA_HOST as the Ollama CLI reads it: quotes and spaces trimmed; `host` or `host:port` means http
 * with default port 11434; an explicit scheme without a port means that scheme's port (80 or 443).
 */
function ollamaUrl(raw: string | undefined, name = 'OLLAMA_HOST'): string {
  const value =
    (raw ?? '')
      .trim()
      .replace(/^["']+|["']+$/g, '')
      .trim() || 'http://127.0.0.1:11434'
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value)
  const url = httpUrl(name, hasScheme ? value : `http://${value}`, ['http:', 'https:'])
  if (!hasScheme && !url.port && !/^[^/]*:\d+(\/|$)/.test(value.replace(/^\[[^\]]*\]/, ''))) url.port = '11434'
  return url.origin
}

/** ALTTEXT_MODEL_HOSTS: a comma list read entry by entry like OLLAMA_HOST; unset means OLLAMA_HOST alone. */
function modelHosts(raw: string | undefined, ollamaHost: string | undefined): string[] {
  const entries = (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
  if (entries.length === 0) return [ollamaUrl(ollamaHost)]
  if (entries.length > 64) throw new ConfigError('ALTTEXT_MODEL_HOSTS', `at most 64 hosts, got ${entries.length}`)
  const urls = entries.map((entry) => ollamaUrl(entry, 'ALTTEXT_MODEL_HOSTS'))
  const duplicate = urls.find((url, i) => urls.indexOf(url) !== i)
  if (duplicate) throw new ConfigError('ALTTEXT_MODEL_HOSTS', `"${duplicate}" is listed twice`)
  return urls
}

const HOST_ENTRY = /^[a-z0-9.-]+$/i

/** `::` in any spelling (`0::0`, `0:0:0:0:0:0:0:0`): every IPv6 address, and IPv4 through the same socket. */
export const isUnspecifiedIpv6 = (host: string): boolean => isIP(host) === 6 && host.split(':').every((group) => /^0*$/.test(group))

function trustedProxies(raw: string | undefined): Cidr[] {
  const entries = raw?.trim()
    ? raw
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean)
    : DEFAULT_TRUSTED_PROXIES
  const parsed = parseTrustedProxies(entries)
  if (typeof parsed === 'string') throw new ConfigError('ALTTEXT_TRUSTED_PROXIES', `"${parsed}" is not an IP or CIDR`)
  return parsed
}

function allowList(raw: string | undefined): string[] {
  if (!raw?.trim()) return []
  return raw
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean)
    .map((entry) => {
      const [address, bits, extra] = entry.split('/')
      if (extra !== undefined) throw new ConfigError('ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS', `"${entry}" is not a host, IP or CIDR`)
      const bare = address!.replace(/^\[|\]$/g, '')
      if (bits !== undefined) {
        const family = isIP(bare)
        const max = family === 4 ? 32 : family === 6 ? 128 : -1
        if (max < 0 || !/^\d+$/.test(bits) || Number(bits) > max) {
          throw new ConfigError('ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS', `"${entry}" is not a valid CIDR`)
        }
        return `${bare}/${bits}`
      }
      if (isIP(bare) || HOST_ENTRY.test(bare)) return bare
      throw new ConfigError('ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS', `"${entry}" is not a host, IP or CIDR`)
    })
}

/** ALTTEXT_CORS_ORIGINS: `*`, or origins as browsers send them (`scheme://host[:port]`, no path). */
function corsOrigins(raw: string | undefined): '*' | string[] {
  const entries = (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
  if (entries.includes('*')) return '*'
  return entries.map((entry) => {
    const url = URL.parse(entry)
    const bare = entry.replace(/\/$/, '')
    if (
      url === null ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      url.username !== '' ||
      url.password !== '' ||
      url.pathname !== '/' ||
      url.search !== '' ||
      url.hash !== '' ||
      !/^[a-z][a-z0-9+.-]*:\/\/[^/?#@]+$/i.test(bare)
    ) {
      throw new ConfigError('ALTTEXT_CORS_ORIGINS', `"${redacted(entry)}" is not an origin: write scheme://host[:port], e.g. https://cms.example.org, or *`)
    }
    return url.origin
  })
}

const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full']

/**
 * ALTTEXT_DATABASE_URL: a postgres:// or postgresql:// URL naming a host and a database, with no query
 * but `sslmode`. Its password may hold any character, so no message repeats the value.
 */
function databaseUrl(raw: string | undefined): string | undefined {
  const value = raw?.trim()
  if (!value) return undefined
  return checkDatabaseUrl(value, 'ALTTEXT_DATABASE_URL')
}

/** The same rules for a URL given elsewhere (`alttext db copy FROM TO`), named `name` in the message. */
export function checkDatabaseUrl(value: string, name: string): string {
  const example = 'postgres://user:password@host:5432/alttext'
  const url = URL.parse(value)
  if (url === null) throw new ConfigError(name, `must be a URL such as ${example}`)
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new ConfigError(name, `must use postgres or postgresql, got "${url.protocol.replace(':', '')}"`)
  if (url.hostname === '') throw new ConfigError(name, `names no host: write ${example}`)
  if (url.pathname.replace(/^\//, '') === '') throw new ConfigError(name, `names no database: write ${example}`)
  for (const [key, setting] of url.searchParams) {
    if (key !== 'sslmode') throw new ConfigError(name, 'takes no query parameter but sslmode')
    if (!SSL_MODES.includes(setting)) throw new ConfigError(name, `sslmode must be one of ${SSL_MODES.join(', ')}`)
  }
  if (url.hash !== '') throw new ConfigError(name, 'must not end in a #fragment')
  return value
}

/**
 * ALTTEXT_REDIS_URL: a redis:// or rediss:// (TLS) URL naming a host, with an optional database number as
 * its path and nothing else. Its password may hold any character, so no message repeats the value.
 */
function redisUrl(raw: string | undefined): string | undefined {
  const value = raw?.trim()
  if (!value) return undefined
  const name = 'ALTTEXT_REDIS_URL'
  const example = 'redis://user:password@host:6379/0'
  const url = URL.parse(value)
  if (url === null) throw new ConfigError(name, `must be a URL such as ${example}`)
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError(name, `must use redis or rediss, got "${url.protocol.replace(':', '')}"`)
  if (url.hostname === '') throw new ConfigError(name, `names no host: write ${example}`)
  if (!/^\/?(\d{1,5})?$/.test(url.pathname)) throw new ConfigError(name, 'its path may only be a database number, e.g. /0')
  if (url.search !== '' || url.hash !== '') throw new ConfigError(name, 'takes no query or #fragment')
  return value
}

/** ALTTEXT_DATABASE_URL alone, for the operator commands that explain PostgreSQL mode instead (backup, restore). */
export function configuredDatabaseUrl(env: Env): string | undefined {
  return databaseUrl(env.ALTTEXT_DATABASE_URL)
}

/** ALTTEXT_DB alone, for the operator commands that need only the database file (backup, restore). */
export function databasePath(env: Env): string {
  return env.ALTTEXT_DB?.trim() || './data/alttext.db'
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/

/** ALTTEXT_REGISTRATION: `open`, `closed`, or `domains:` and a comma list matched exactly (a subdomain is listed on its own). */
function registration(raw: string | undefined): RegistrationPolicy {
  const value = raw?.trim() || 'open'
  const lower = value.toLowerCase()
  if (lower === 'open' || lower === 'closed') return { mode: lower }
  if (!lower.startsWith('domains:')) throw new ConfigError('ALTTEXT_REGISTRATION', `must be open, closed or domains:a.org,b.org, got "${value}"`)
  const entries = value
    .slice('domains:'.length)
    .split(',')
    .map((entry) => entry.trim().replace(/^@/, ''))
    .filter(Boolean)
  if (entries.length === 0) throw new ConfigError('ALTTEXT_REGISTRATION', 'domains: needs at least one domain, e.g. domains:example.org')
  const domains = entries.map((entry) => {
    if (entry.startsWith('*.'))
      throw new ConfigError(
        'ALTTEXT_REGISTRATION',
        `"${entry}": domains match exactly; list each subdomain on its own (${entry.slice(2)}, mail.${entry.slice(2)})`,
      )
    const domain = emailDomain(entry)
    if (!DOMAIN.test(domain)) throw new ConfigError('ALTTEXT_REGISTRATION', `"${entry}" is not a domain name`)
    return domain
  })
  return { mode: 'domains', domains: [...new Set(domains)] }
}

/** ALTTEXT_VERIFY_EMAIL: `on` or `off`; unset follows the policy. A domain is proven only by its mailbox, so `domains:` cannot turn it off. */
function verifyEmail(raw: string | undefined, policy: RegistrationPolicy): boolean {
  const value = raw?.trim().toLowerCase() || (policy.mode === 'domains' ? 'on' : 'off')
  if (value !== 'on' && value !== 'off') throw new ConfigError('ALTTEXT_VERIFY_EMAIL', `must be "on" or "off", got "${raw?.trim()}"`)
  if (value === 'off' && policy.mode === 'domains')
    throw new ConfigError(
      'ALTTEXT_VERIFY_EMAIL',
      'cannot be off while ALTTEXT_REGISTRATION is domains: (only a mailed link proves that an address of the domain belongs to whoever signs up); leave it unset',
    )
  return value === 'on'
}

export function loadConfig(env: Env): Config {
  const port = wholeNumber(env, 'PORT', 3000, 0, 65535)
  // Loopback unless the operator opens it up: registration is open by default, and the model is theirs to pay for.
  const host = env.HOST?.trim() || 'localhost'
  if (!isIP(host) && !HOST_ENTRY.test(host)) throw new ConfigError('HOST', `must be an IP address or host name, got "${host}"`)
  // One socket binds one address: `localhost` is both loopback addresses, whatever the resolver lists first.
  const listenAddresses = host.toLowerCase() === 'localhost' ? ['127.0.0.1', '::1'] : [host]

  const dbPath = databasePath(env)

  const model = env.ALTTEXT_MODEL?.trim() || 'llava'
  if (!/^[\w.\-/:]+$/.test(model)) throw new ConfigError('ALTTEXT_MODEL', `"${model}" is not a model name`)

  const publicRaw = env.ALTTEXT_PUBLIC_URL?.trim() || `http://localhost:${port}`
  const publicUrl = httpUrl('ALTTEXT_PUBLIC_URL', publicRaw, ['http:', 'https:']).href.replace(/\/+$/, '')

  const smtpRaw = env.ALTTEXT_SMTP_URL?.trim() || undefined
  if (smtpRaw) httpUrl('ALTTEXT_SMTP_URL', smtpRaw, ['smtp:', 'smtps:'])
  const mailFrom = env.ALTTEXT_MAIL_FROM?.trim() || `alttext@${new URL(publicUrl).hostname}`
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(mailFrom) && !/^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(mailFrom)) {
    throw new ConfigError('ALTTEXT_MAIL_FROM', `"${mailFrom}" is not an email address`)
  }

  const apiRaw = (env.ALTTEXT_MODEL_API?.trim() || 'ollama').toLowerCase()
  if (apiRaw !== 'ollama' && apiRaw !== 'openai') throw new ConfigError('ALTTEXT_MODEL_API', `must be "ollama" or "openai", got "${apiRaw}"`)
  const modelApiKey = env.ALTTEXT_MODEL_API_KEY?.trim() || undefined
  // Never echoed: only its shape is checked.
  if (modelApiKey !== undefined && !/^[\x21-\x7e]+$/.test(modelApiKey)) throw new ConfigError('ALTTEXT_MODEL_API_KEY', 'must be printable ASCII without spaces')

  const metricsToken = env.ALTTEXT_METRICS_TOKEN?.trim() || undefined
  // Never echoed: only its shape is checked. A short token could be guessed by a scraper's neighbours.
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,}$/.test(metricsToken))
    throw new ConfigError('ALTTEXT_METRICS_TOKEN', 'must be at least 16 printable ASCII characters without spaces (e.g. openssl rand -hex 32)')

  const cacheScope = (env.ALTTEXT_CACHE_SCOPE?.trim() || 'account').toLowerCase()
  if (cacheScope !== 'account' && cacheScope !== 'shared') throw new ConfigError('ALTTEXT_CACHE_SCOPE', `must be "account" or "shared", got "${cacheScope}"`)
  const policy = registration(env.ALTTEXT_REGISTRATION)

  const rateRaw = (env.ALTTEXT_RATE_LIMITS?.trim() || 'on').toLowerCase()
  if (rateRaw !== 'on' && rateRaw !== 'off') throw new ConfigError('ALTTEXT_RATE_LIMITS', `must be "on" or "off", got "${rateRaw}"`)

  const database = databaseUrl(env.ALTTEXT_DATABASE_URL)
  const redis = redisUrl(env.ALTTEXT_REDIS_URL)

  const extraCaCerts = env.NODE_EXTRA_CA_CERTS?.trim() || undefined
  let extraCaPem: string | undefined
  if (extraCaCerts) {
    try {
      extraCaPem = readFileSync(extraCaCerts, 'utf8')
    } catch (error) {
      throw new ConfigError('NODE_EXTRA_CA_CERTS', `cannot read "${extraCaCerts}": ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
    }
    if (!extraCaPem.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError('NODE_EXTRA_CA_CERTS', `"${extraCaCerts}" holds no PEM certificate`)
  }

  const sideOverride = env.ALTTEXT_IMAGE_MAX_SIDE?.trim()
  const modelSide = modelImageSide(model)
  const imageMaxSide = wholeNumber(env, 'ALTTEXT_IMAGE_MAX_SIDE', modelSide.side, 256, 4096)
  const imageMaxSideReason = sideOverride
    ? 'ALTTEXT_IMAGE_MAX_SIDE'
    : modelSide.family
      ? `model family ${modelSide.family}: ${modelSide.basis}`
      : `the default: ${modelSide.basis}`

  return {
    port,
    host,
    listenAddresses,
    // `::` listens on IPv6 and, dual stack, on IPv4 too; a machine without IPv6 gets 0.0.0.0 (app.ts).
    ipv4Fallback: isUnspecifiedIpv6(host) ? '0.0.0.0' : null,
    dbPath,
    databaseUrl: database,
    batchLeaseSeconds: wholeNumber(env, 'ALTTEXT_BATCH_LEASE_SECONDS', 60, 5, 3600),
    ollamaHost: ollamaUrl(env.OLLAMA_HOST),
    modelHosts: modelHosts(env.ALTTEXT_MODEL_HOSTS, env.OLLAMA_HOST),
    modelApi: apiRaw,
    modelApiKey,
    model,
    modelConcurrency: wholeNumber(env, 'ALTTEXT_MODEL_CONCURRENCY', 2, 1, 64),
    publicUrl,
    smtpUrl: smtpRaw,
    mailFrom,
    trustProxyHops: wholeNumber(env, 'ALTTEXT_TRUST_PROXY', 0, 0, 10),
    trustedProxies: trustedProxies(env.ALTTEXT_TRUSTED_PROXIES),
    allowPrivateImageHosts: allowList(env.ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS),
    freeCredits: wholeNumber(env, 'ALTTEXT_FREE_CREDITS', 50, 0, 1_000_000_000),
    rateLimits: rateRaw === 'on',
    redisUrl: redis,
    redisTimeoutMs: wholeNumber(env, 'ALTTEXT_REDIS_TIMEOUT_MS', REDIS_TIMEOUT_MS, 10, 5000),
    limitsPerReplica: database !== undefined && redis === undefined,
    extraCaCerts,
    extraCaPem,
    cacheTtlDays: wholeNumber(env, 'ALTTEXT_CACHE_TTL_DAYS', 30, 0, 3650),
    cacheScope,
    imageMaxSide,
    imageMaxSideReason,
    decodeBudgetMb: wholeNumber(env, 'ALTTEXT_DECODE_BUDGET_MB', 512, 64, 65_536),
    maxImagesPerAccount: wholeNumber(env, 'ALTTEXT_MAX_IMAGES_PER_ACCOUNT', 2, 1, 64),
    corsOrigins: corsOrigins(env.ALTTEXT_CORS_ORIGINS),
    batchRetentionDays: wholeNumber(env, 'ALTTEXT_BATCH_RETENTION_DAYS', 30, 1, 3650),
    metricsToken,
    registration: policy,
    verifyEmail: verifyEmail(env.ALTTEXT_VERIFY_EMAIL, policy),
  }
}

/** What a client command (`alttext describe`, `alttext audit`) needs to call a running alttext. */
export type ClientConfig = {
  /** Base URL of the service, without a trailing slash. */
  url: string
  /** The API key sent as X-API-Key. */
  key: string
}

/** The variables the client commands read, for their `--help`. */
export const CLIENT_VARIABLES: { name: string; default: string; meaning: string }[] = [
  { name: 'ALTTEXT_URL', default: 'http://localhost:3000', meaning: 'base URL of the alttext service to call (--url wins)' },
  { name: 'ALTTEXT_API_KEY', default: 'unset', meaning: 'API key of the account that pays the credits (--key wins)' },
]

/** The client commands' configuration: `--url`/`--key` win over ALTTEXT_URL/ALTTEXT_API_KEY. */
export function loadClientConfig(env: Env, flags: { url?: string; key?: string } = {}): ClientConfig {
  const urlRaw = flags.url?.trim() || env.ALTTEXT_URL?.trim() || 'http://localhost:3000'
  const urlName = flags.url?.trim() ? '--url' : 'ALTTEXT_URL'
  const url = httpUrl(urlName, urlRaw, ['http:', 'https:'])
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new ConfigError(urlName, `must be the service's base URL without credentials, query or fragment, got "${redacted(urlRaw)}"`)
  }
  const key = flags.key?.trim() || env.ALTTEXT_API_KEY?.trim() || ''
  if (key === '')
    throw new ConfigError('ALTTEXT_API_KEY', 'an API key is needed: set ALTTEXT_API_KEY or pass --key (make one in the console or with POST /api/keys)')
  if (!/^[\x21-\x7e]+$/.test(key)) throw new ConfigError(flags.key?.trim() ? '--key' : 'ALTTEXT_API_KEY', 'must be printable ASCII without spaces')
  return { url: url.href.replace(/\/+$/, ''), key }
}
