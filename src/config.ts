// The only module that reads the environment. Everything else receives a Config.
// Each variable is declared once, in VARIABLES: its --help line, its default, its range and how it is read
// all come from that one entry, so the help and the code cannot drift apart.
import { existsSync, readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { join } from 'node:path'
import type { Cidr } from './intake/address'
import { DEFAULT_TRUSTED_PROXIES, parseTrustedProxies } from './http/client-address'
import { modelImageSide } from './shared/model-image-sizes'
import { REDIS_TIMEOUT_MS } from './shared/limits'
import { emailDomain } from './modules/accounts/registration'

/** Who may sign up with POST /api/register (ALTTEXT_REGISTRATION); `alttext admin accounts create` always may. */
export type RegistrationPolicy = { mode: 'open' } | { mode: 'closed' } | { mode: 'domains'; domains: string[] }

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`)
  }
}

export type Env = Record<string, string | undefined>

/** One environment variable: its `--help` line and how its value is read, from a single declaration. */
export type Variable<T = unknown> = {
  readonly name: string
  /** The default as `--help` and the README show it. */
  readonly default: string
  /** What `--help` says it is; a range it shows is the one `read` enforces. */
  readonly meaning: string
  /** The whole numbers accepted, for the variables that are one. */
  readonly range?: { readonly min: number; readonly max: number }
  /** The value when unset, where that is a constant (present even when it is undefined). */
  readonly fallback?: T
  /** The variable's value in `env`; a bad one throws a ConfigError naming the variable. */
  readonly read: (env: Env) => T
}

/** The variable's value, spaces trimmed; unset and empty are the same. */
const given = (env: Env, name: string): string | undefined => env[name]?.trim() || undefined

/** A constant default (shown as itself unless `shown` says otherwise), or one computed from other variables. */
type Default<T> = { default: T; shown?: string } | { default: (env: Env) => T; shown: string }

const fallbackOf = <T>(spec: Default<T>, env: Env): T => (typeof spec.default === 'function' ? (spec.default as (env: Env) => T)(env) : spec.default)

const constantFallback = <T>(spec: Default<T>): { fallback?: T } => (typeof spec.default === 'function' ? {} : { fallback: spec.default as T })

/** A whole number from min to max; `{range}` in the meaning shows them as `min-max`. */
function int(name: string, spec: Default<number> & { min: number; max: number; meaning: string }): Variable<number> {
  const { min, max } = spec
  return {
    name,
    default: spec.shown ?? String(spec.default),
    meaning: spec.meaning.replace('{range}', `${min}-${max}`),
    range: { min, max },
    ...constantFallback(spec),
    read: (env) => {
      const raw = given(env, name)
      if (raw === undefined) return fallbackOf(spec, env)
      if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`)
      const value = Number(raw)
      if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`)
      return value
    },
  }
}

/** One of a few words, in any case. */
function choice<const C extends string>(name: string, spec: { choices: readonly C[]; default: NoInfer<C>; meaning: string }): Variable<C> {
  const alternatives = spec.choices
    .map((c) => `"${c}"`)
    .join(', ')
    .replace(/, ([^,]*)$/, ' or $1')
  return {
    name,
    default: spec.default,
    meaning: spec.meaning,
    fallback: spec.default,
    read: (env) => {
      const value = (given(env, name) ?? spec.default).toLowerCase()
      const found = spec.choices.find((c) => c === value)
      if (found === undefined) throw new ConfigError(name, `must be ${alternatives}, got "${value}"`)
      return found
    },
  }
}

/** `on` or `off`, as a boolean. */
function onOff(name: string, spec: { default: 'on' | 'off'; meaning: string }): Variable<boolean> {
  const word = choice(name, { choices: ['on', 'off'], ...spec })
  return { ...word, fallback: spec.default === 'on', read: (env) => word.read(env) === 'on' }
}

/** A string with a default; `check` names what is wrong with a value (the default included), if anything. */
function text(name: string, spec: Default<string> & { meaning: string; check?: (value: string) => string | undefined }): Variable<string> {
  return {
    name,
    default: spec.shown ?? String(spec.default),
    meaning: spec.meaning,
    ...constantFallback(spec),
    read: (env) => {
      const value = given(env, name) ?? fallbackOf(spec, env)
      const problem = spec.check?.(value)
      if (problem !== undefined) throw new ConfigError(name, problem)
      return value
    },
  }
}

/** A string that may be unset; `check` names what is wrong with a value, if anything. */
function optional(name: string, spec: { meaning: string; shown?: string; check?: (value: string) => string | undefined }): Variable<string | undefined> {
  return {
    name,
    default: spec.shown ?? 'unset',
    meaning: spec.meaning,
    fallback: undefined,
    read: (env) => {
      const value = given(env, name)
      const problem = value === undefined ? undefined : spec.check?.(value)
      if (problem !== undefined) throw new ConfigError(name, problem)
      return value
    },
  }
}

/** The entries of a comma list, trimmed, empty ones dropped. */
const commaList = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)

/** A comma list, each entry read by `read` (which also says what an empty list means). */
function list<T>(name: string, spec: { shown: string; meaning: string; read: (entries: string[], env: Env) => T }): Variable<T> {
  return { name, default: spec.shown, meaning: spec.meaning, read: (env) => spec.read(commaList(given(env, name)), env) }
}

/** Anything else: `read` gets the trimmed value (undefined when unset) and may throw a ConfigError. */
function custom<T>(name: string, spec: { shown: string; meaning: string; read: (value: string | undefined, env: Env) => T }): Variable<T> {
  return { name, default: spec.shown, meaning: spec.meaning, read: (env) => spec.read(given(env, name), env) }
}

/** A URL as it may be shown: its password replaced, so an error message never echoes a secret. */
function redacted(raw: string): string {
  return raw.replace(/:[^@/]*@/g, ':***@')
}

function urlProblem(raw: string, schemes: string[]): string | undefined {
  const url = URL.parse(raw)
  if (url === null) return `must be a URL, got "${redacted(raw)}"`
  if (!schemes.includes(url.protocol)) return `must use ${schemes.map((s) => s.replace(':', '')).join(' or ')}, got "${url.protocol.replace(':', '')}"`
  return undefined
}

function httpUrl(name: string, raw: string, schemes: string[]): URL {
  const problem = urlProblem(raw, schemes)
  if (problem !== undefined) throw new ConfigError(name, problem)
  return new URL(raw)
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
function modelHosts(entries: string[], env: Env): string[] {
  if (entries.length === 0) return [VARIABLES.ollamaHost.read(env)]
  if (entries.length > 64) throw new ConfigError('ALTTEXT_MODEL_HOSTS', `at most 64 hosts, got ${entries.length}`)
  const urls = entries.map((entry) => ollamaUrl(entry, 'ALTTEXT_MODEL_HOSTS'))
  const duplicate = urls.find((url, i) => urls.indexOf(url) !== i)
  if (duplicate) throw new ConfigError('ALTTEXT_MODEL_HOSTS', `"${duplicate}" is listed twice`)
  return urls
}

const HOST_ENTRY = /^[a-z0-9.-]+$/i

/** `::` in any spelling (`0::0`, `0:0:0:0:0:0:0:0`): every IPv6 address, and IPv4 through the same socket. */
export const isUnspecifiedIpv6 = (host: string): boolean => isIP(host) === 6 && host.split(':').every((group) => /^0*$/.test(group))

/** Unset means the default ranges; set to nothing but commas, no proxy is believed. */
function trustedProxies(value: string | undefined): Cidr[] {
  const parsed = parseTrustedProxies(value === undefined ? DEFAULT_TRUSTED_PROXIES : commaList(value))
  if (typeof parsed === 'string') throw new ConfigError('ALTTEXT_TRUSTED_PROXIES', `"${parsed}" is not an IP or CIDR`)
  return parsed
}

function allowList(entries: string[]): string[] {
  return entries
    .map((entry) => entry.toLowerCase())
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
function corsOrigins(entries: string[]): '*' | string[] {
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
 * What is wrong with a PostgreSQL URL, if anything: it must be postgres:// or postgresql://, name a host
 * and a database, and have no query but `sslmode`. Its password may hold any character, so no message
 * repeats the value.
 */
function databaseUrlProblem(value: string): string | undefined {
  const example = 'postgres://user:password@host:5432/alttext'
  const url = URL.parse(value)
  if (url === null) return `must be a URL such as ${example}`
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') return `must use postgres or postgresql, got "${url.protocol.replace(':', '')}"`
  if (url.hostname === '') return `names no host: write ${example}`
  if (url.pathname.replace(/^\//, '') === '') return `names no database: write ${example}`
  for (const [key, setting] of url.searchParams) {
    if (key !== 'sslmode') return 'takes no query parameter but sslmode'
    if (!SSL_MODES.includes(setting)) return `sslmode must be one of ${SSL_MODES.join(', ')}`
  }
  if (url.hash !== '') return 'must not end in a #fragment'
  return undefined
}

/** The same rules for a URL given elsewhere (`alttext db copy FROM TO`), named `name` in the message. */
export function checkDatabaseUrl(value: string, name: string): string {
  const problem = databaseUrlProblem(value)
  if (problem !== undefined) throw new ConfigError(name, problem)
  return value
}

/**
 * What is wrong with a Redis URL, if anything: redis:// or rediss:// (TLS), naming a host, with an optional
 * database number as its path and nothing else. Its password may hold any character, so no message repeats the value.
 */
function redisUrlProblem(value: string): string | undefined {
  const example = 'redis://user:password@host:6379/0'
  const url = URL.parse(value)
  if (url === null) return `must be a URL such as ${example}`
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return `must use redis or rediss, got "${url.protocol.replace(':', '')}"`
  if (url.hostname === '') return `names no host: write ${example}`
  if (!/^\/?(\d{1,5})?$/.test(url.pathname)) return 'its path may only be a database number, e.g. /0'
  if (url.search !== '' || url.hash !== '') return 'takes no query or #fragment'
  return undefined
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/

/** ALTTEXT_REGISTRATION: `open`, `closed`, or `domains:` and a comma list matched exactly (a subdomain is listed on its own). */
function registration(raw: string | undefined): RegistrationPolicy {
  const value = raw?.trim() || 'open'
  const lower = value.toLowerCase()
  if (lower === 'open' || lower === 'closed') return { mode: lower }
  if (!lower.startsWith('domains:')) throw new ConfigError('ALTTEXT_REGISTRATION', `must be open, closed or domains:a.org,b.org, got "${value}"`)
  const entries = commaList(value.slice('domains:'.length))
    .map((entry) => entry.replace(/^@/, ''))
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

/** NODE_EXTRA_CA_CERTS: the file and its PEM text, read at start (in-process use cannot rely on Bun reading the variable). */
function extraCa(file: string | undefined): { file: string; pem: string } | undefined {
  if (file === undefined) return undefined
  let pem: string
  try {
    pem = readFileSync(file, 'utf8')
  } catch (error) {
    throw new ConfigError('NODE_EXTRA_CA_CERTS', `cannot read "${file}": ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError('NODE_EXTRA_CA_CERTS', `"${file}" holds no PEM certificate`)
  return { file, pem }
}

/** What ALTTEXT_OCR_MODELS's folder lacks, if anything (read at start, so a typo fails fast). */
function ocrModelsProblem(dir: string): string | undefined {
  const missing = ['rec.onnx', 'dict.txt'].filter((name) => !existsSync(join(dir, name)))
  return missing.length > 0 ? `"${dir}" has no ${missing.join(' and no ')}` : undefined
}

const PRINTABLE = /^[\x21-\x7e]+$/

/**
 * Every variable the service reads, in the order `--help` and the README list them (and read in this
 * order, so the first bad one is the one reported). The key is the Config field that holds its value.
 */
export const VARIABLES = {
  port: int('PORT', { default: 3000, min: 0, max: 65535, meaning: 'listen port (0 picks a free port)' }),
  /** HOST as set; unset: `localhost`, that is 127.0.0.1 and ::1 (only this machine reaches the service). */
  host: text('HOST', {
    // Loopback unless the operator opens it up: registration is open by default, and the model is theirs to pay for.
    default: 'localhost',
    meaning: 'listen address: `localhost` is 127.0.0.1 and ::1, this machine only; `::` is every IPv6 and IPv4 address (0.0.0.0 where the machine has no IPv6)',
    check: (host) => (isIP(host) || HOST_ENTRY.test(host) ? undefined : `must be an IP address or host name, got "${host}"`),
  }),
  dbPath: text('ALTTEXT_DB', { default: './data/alttext.db', meaning: 'SQLite file (directory created if missing)' }),
  /** PostgreSQL instead of the SQLite file (which is then ignored); unset: SQLite. May hold a password: never logged. */
  databaseUrl: optional('ALTTEXT_DATABASE_URL', {
    meaning:
      'postgres://user:password@host:5432/db (also postgresql://, ?sslmode=): every durable fact in PostgreSQL 15+, for several replicas; ALTTEXT_DB is then ignored. Unset: embedded SQLite',
    check: databaseUrlProblem,
  }),
  /** How long a replica's claim on a batch item or webhook attempt lasts unless renewed. */
  batchLeaseSeconds: int('ALTTEXT_BATCH_LEASE_SECONDS', {
    default: 60,
    min: 5,
    max: 3600,
    meaning: "how long a replica's claim on a batch item or webhook attempt lasts unless renewed; another replica takes a dead one's over after it ({range})",
  }),
  ollamaHost: custom('OLLAMA_HOST', {
    shown: 'http://127.0.0.1:11434',
    meaning: 'Ollama server, as the Ollama CLI reads it',
    read: (value) => ollamaUrl(value),
  }),
  model: text('ALTTEXT_MODEL', {
    default: 'llava',
    meaning: 'vision model name',
    check: (model) => (/^[\w.\-/:]+$/.test(model) ? undefined : `"${model}" is not a model name`),
  }),
  /** Which API the model server speaks: Ollama's native one, or OpenAI-compatible chat completions. */
  modelApi: choice('ALTTEXT_MODEL_API', {
    choices: ['ollama', 'openai'],
    default: 'ollama',
    meaning: '`ollama` (native API) or `openai` (OpenAI-compatible chat completions at OLLAMA_HOST/v1: vLLM, llama.cpp server, LM Studio, LocalAI)',
  }),
  /** Bearer token for the model server; never logged. */
  modelApiKey: optional('ALTTEXT_MODEL_API_KEY', {
    meaning: 'bearer token for the model server (never logged)',
    // Never echoed: only its shape is checked.
    check: (key) => (PRINTABLE.test(key) ? undefined : 'must be printable ASCII without spaces'),
  }),
  /** Model server base URLs; by default OLLAMA_HOST alone. */
  modelHosts: list('ALTTEXT_MODEL_HOSTS', {
    shown: 'OLLAMA_HOST',
    meaning: 'comma list of model server base URLs; calls go to the least-loaded healthy one, a failing host is taken out and probed back in',
    read: modelHosts,
  }),
  modelConcurrency: int('ALTTEXT_MODEL_CONCURRENCY', {
    default: 2,
    min: 1,
    max: 64,
    meaning: 'generations in flight at once per model host; the rest wait in a bounded queue',
  }),
  publicUrl: custom('ALTTEXT_PUBLIC_URL', {
    shown: 'http://localhost:<PORT>',
    meaning: 'base of `docs` links and reset links',
    read: (value, env): string =>
      httpUrl('ALTTEXT_PUBLIC_URL', value ?? `http://localhost:${VARIABLES.port.read(env)}`, ['http:', 'https:']).href.replace(/\/+$/, ''),
  }),
  smtpUrl: optional('ALTTEXT_SMTP_URL', {
    meaning: 'mail relay for reset and verification links, e.g. smtp://user:pass@mail:587',
    check: (url) => urlProblem(url, ['smtp:', 'smtps:']),
  }),
  mailFrom: text('ALTTEXT_MAIL_FROM', {
    default: (env): string => `alttext@${new URL(VARIABLES.publicUrl.read(env)).hostname}`,
    shown: 'unset (alttext@<public host>)',
    meaning: 'sender address of reset mails',
    check: (from) => (/^[^\s@<>]+@[^\s@<>]+$/.test(from) || /^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(from) ? undefined : `"${from}" is not an email address`),
  }),
  trustProxyHops: int('ALTTEXT_TRUST_PROXY', {
    default: 0,
    shown: 'unset',
    min: 0,
    max: 10,
    meaning: 'trusted proxy hops for X-Forwarded-For (a whole number)',
  }),
  trustedProxies: custom('ALTTEXT_TRUSTED_PROXIES', {
    shown: 'loopback and private ranges',
    meaning: 'comma list of IPs and CIDRs whose X-Forwarded-For is believed (only with ALTTEXT_TRUST_PROXY)',
    read: trustedProxies,
  }),
  allowPrivateImageHosts: list('ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS', {
    shown: 'unset',
    meaning: 'comma list of host names, IPs and CIDRs that images may come from although private or loopback',
    read: allowList,
  }),
  freeCredits: int('ALTTEXT_FREE_CREDITS', { default: 50, min: 0, max: 1_000_000_000, meaning: 'credits per monthly period of the free plan' }),
  rateLimits: onOff('ALTTEXT_RATE_LIMITS', { default: 'on', meaning: '`off` only for benchmarks; the service warns at start-up' }),
  /** Rate limits and the sign-in slow-down shared by every replica; unset: kept in this process. May hold a password: never logged. */
  redisUrl: optional('ALTTEXT_REDIS_URL', {
    meaning:
      'redis://[user:password@]host:6379[/db] or rediss://: Redis 7+ or Valkey; rate limits and the sign-in slow-down are shared by every replica. Unset: kept per process',
    check: redisUrlProblem,
  }),
  /** How long a rate-limit or slow-down check waits for Redis before this replica decides alone. */
  redisTimeoutMs: int('ALTTEXT_REDIS_TIMEOUT_MS', {
    default: REDIS_TIMEOUT_MS,
    min: 10,
    max: 5000,
    meaning:
      'with ALTTEXT_REDIS_URL: how long a rate-limit check waits for Redis ({range} ms); past it this replica decides alone, for 5 s at least, before one command probes Redis again',
  }),
  /** Split into Config's extraCaCerts and extraCaPem. */
  extraCa: custom('NODE_EXTRA_CA_CERTS', { shown: 'unset', meaning: 'extra CA bundle (PEM file) for image hosts; Bun reads it', read: extraCa }),
  cacheTtlDays: int('ALTTEXT_CACHE_TTL_DAYS', {
    default: 30,
    min: 0,
    max: 3650,
    meaning: 'days a generated alt text stays cached (0 turns the cache off)',
  }),
  /** Whose cached answers an account may get: only its own (`account`), or every account's (`shared`). */
  cacheScope: choice('ALTTEXT_CACHE_SCOPE', {
    choices: ['account', 'shared'],
    default: 'account',
    meaning: '`account`: a cached answer serves only the account that paid for it; `shared`: one cache for every account (one organisation)',
  }),
  /** OCR inside the service (src/ocr): the text of images, read before the model sees them. */
  ocr: onOff('ALTTEXT_OCR', {
    default: 'on',
    meaning: '`on`: read the text in each image with the built-in OCR (PaddleOCR, loaded on first use, ~200 MB); `off`: the model alone says what text it sees',
  }),
  /** An operator's OCR recognition model in place of the built-in one; unset: the built-in (Chinese, English, some Latin accents). */
  ocrModels: optional('ALTTEXT_OCR_MODELS', {
    meaning: 'folder with a PaddleOCR recognition model for other languages: rec.onnx and its dict.txt (det.onnx optional); unset: the built-in model',
    check: ocrModelsProblem,
  }),
  decodeBudgetMb: int('ALTTEXT_DECODE_BUDGET_MB', {
    default: 512,
    min: 64,
    max: 65_536,
    meaning: 'memory for images being decoded at once ({range}); more waits its turn, one image over it is refused',
  }),
  maxImagesPerAccount: int('ALTTEXT_MAX_IMAGES_PER_ACCOUNT', {
    default: 2,
    min: 1,
    max: 64,
    meaning: 'images one account may have fetched or prepared at once ({range}); more wait',
  }),
  /** Days an ended batch and its results are kept before they are deleted. */
  batchRetentionDays: int('ALTTEXT_BATCH_RETENTION_DAYS', {
    default: 30,
    min: 1,
    max: 3650,
    meaning: 'days an ended batch and its results are kept, then deleted ({range})',
  }),
  /** Longest image side sent to the model: ALTTEXT_IMAGE_MAX_SIDE, else the model family's (shared/model-image-sizes.ts). */
  imageMaxSide: int('ALTTEXT_IMAGE_MAX_SIDE', {
    default: (env): number => modelImageSide(VARIABLES.model.read(env)).side,
    shown: 'per model, see docs/models.md',
    min: 256,
    max: 4096,
    meaning: 'longest image side, in pixels, sent to the model ({range}); unset: what the model family uses (1024 for models not in the table)',
  }),
  /** Browser origins allowed to call the API with CORS: `*` for any, none by default. */
  corsOrigins: list('ALTTEXT_CORS_ORIGINS', {
    shown: 'unset (CORS off)',
    meaning: 'comma list of browser origins (https://cms.example.org) allowed to call the API with a key, or *; never with the session',
    read: corsOrigins,
  }),
  /** Bearer token for GET /metrics; unset: only loopback clients may scrape. Never logged. */
  metricsToken: optional('ALTTEXT_METRICS_TOKEN', {
    meaning: 'bearer token for GET /metrics (Prometheus text format), at least 16 characters; unset: /metrics answers only loopback clients',
    // Never echoed: only its shape is checked. A short token could be guessed by a scraper's neighbours.
    check: (token) =>
      /^[\x21-\x7e]{16,}$/.test(token) ? undefined : 'must be at least 16 printable ASCII characters without spaces (e.g. openssl rand -hex 32)',
  }),
  registration: custom('ALTTEXT_REGISTRATION', {
    shown: 'open',
    meaning: '`open`, `closed` (accounts only by `alttext admin`), or `domains:a.org,b.org` (only emails at exactly these domains may sign up)',
    read: registration,
  }),
  /** New accounts must follow a mailed link before they may do anything: always under `domains:`, on open sites with ALTTEXT_VERIFY_EMAIL=on. */
  verifyEmail: custom('ALTTEXT_VERIFY_EMAIL', {
    shown: 'on for domains:, else off',
    meaning: '`on`: new accounts work once they follow a mailed link (always under `domains:`)',
    read: (value, env): boolean => verifyEmail(value, VARIABLES.registration.read(env)),
  }),
} satisfies Record<string, Variable>

/** Every variable the service reads, for `--help` and the README. */
export const CONFIG_VARIABLES: Variable[] = Object.values(VARIABLES)

type Values = { [K in keyof typeof VARIABLES]: ReturnType<(typeof VARIABLES)[K]['read']> }

/** ALTTEXT_DATABASE_URL alone, for the operator commands that explain PostgreSQL mode instead (backup, restore). */
export function configuredDatabaseUrl(env: Env): string | undefined {
  return VARIABLES.databaseUrl.read(env)
}

/** ALTTEXT_OCR_MODELS alone, for `alttext ocr`. */
export function ocrModelsDir(env: Env): string | undefined {
  return VARIABLES.ocrModels.read(env)
}

/** ALTTEXT_DB alone, for the operator commands that need only the database file (backup, restore). */
export function databasePath(env: Env): string {
  return VARIABLES.dbPath.read(env)
}

export function loadConfig(env: Env) {
  // One variable after the other, in the table's order; the cast is what Object.fromEntries cannot say.
  const { extraCa, ...values } = Object.fromEntries(Object.entries(VARIABLES).map(([key, variable]) => [key, variable.read(env)])) as Values
  const modelSide = modelImageSide(values.model)
  return {
    ...values,
    /** The addresses listened on, on the same port: HOST's one, or 127.0.0.1 and ::1 for `localhost`. */
    // One socket binds one address: `localhost` is both loopback addresses, whatever the resolver lists first.
    listenAddresses: values.host.toLowerCase() === 'localhost' ? ['127.0.0.1', '::1'] : [values.host],
    /** Where to listen instead when `host` cannot be listened on: 0.0.0.0 for `::` (a machine without IPv6); null for any other HOST. */
    // `::` listens on IPv6 and, dual stack, on IPv4 too; a machine without IPv6 gets 0.0.0.0 (app.ts).
    ipv4Fallback: isUnspecifiedIpv6(values.host) ? '0.0.0.0' : null,
    /** Several replicas (ALTTEXT_DATABASE_URL) and no Redis: each replica keeps its own limits, and the service says so. */
    limitsPerReplica: values.databaseUrl !== undefined && values.redisUrl === undefined,
    extraCaCerts: extraCa?.file,
    /** Extra CA bundle's PEM text, read at start (in-process use cannot rely on Bun reading the variable). */
    extraCaPem: extraCa?.pem,
    /** Where imageMaxSide came from, for the start-up log. */
    imageMaxSideReason: given(env, VARIABLES.imageMaxSide.name)
      ? VARIABLES.imageMaxSide.name
      : modelSide.family
        ? `model family ${modelSide.family}: ${modelSide.basis}`
        : `the default: ${modelSide.basis}`,
  }
}

/** The service's configuration: every variable's value (VARIABLES) and what follows from them. */
export type Config = ReturnType<typeof loadConfig>

/** What a client command (`alttext describe`, `alttext audit`) needs to call a running alttext. */
export type ClientConfig = {
  /** Base URL of the service, without a trailing slash. */
  url: string
  /** The API key sent as X-API-Key. */
  key: string
}

/** The variables the client commands read, declared like VARIABLES; `--url` and `--key` win over them. */
const CLIENT = {
  url: text('ALTTEXT_URL', { default: 'http://localhost:3000', meaning: 'base URL of the alttext service to call (--url wins)' }),
  key: optional('ALTTEXT_API_KEY', { meaning: 'API key of the account that pays the credits (--key wins)' }),
} satisfies Record<string, Variable>

/** The variables the client commands read, for their `--help`. */
export const CLIENT_VARIABLES: Variable[] = Object.values(CLIENT)

/** The client commands' configuration: `--url`/`--key` win over ALTTEXT_URL/ALTTEXT_API_KEY. */
export function loadClientConfig(env: Env, flags: { url?: string; key?: string } = {}): ClientConfig {
  const urlRaw = flags.url?.trim() || CLIENT.url.read(env)
  const urlName = flags.url?.trim() ? '--url' : CLIENT.url.name
  const url = httpUrl(urlName, urlRaw, ['http:', 'https:'])
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new ConfigError(urlName, `must be the service's base URL without credentials, query or fragment, got "${redacted(urlRaw)}"`)
  }
  const key = flags.key?.trim() || CLIENT.key.read(env) || ''
  if (key === '')
    throw new ConfigError('ALTTEXT_API_KEY', 'an API key is needed: set ALTTEXT_API_KEY or pass --key (make one in the console or with POST /api/keys)')
  if (!PRINTABLE.test(key)) throw new ConfigError(flags.key?.trim() ? '--key' : 'ALTTEXT_API_KEY', 'must be printable ASCII without spaces')
  return { url: url.href.replace(/\/+$/, ''), key }
}
