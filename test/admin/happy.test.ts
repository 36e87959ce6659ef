// `alttext admin` beside a running service, on the same database file: every command does what it says,
// and what it changes (a plan, a grant, a disabled or deleted account) is what the service answers with
// from then on, within a second, without a restart.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { type RegisteredAccount, startTestService, type TestService, uniqueEmail, waitUntil } from '../support/service'
import { signIn, withSession } from '../support/session'
import { type SmtpCapture, startSmtpCapture } from '../support/smtp'
import { type AdminResult, adminJson, adminOf, freshImage } from './support'

// Each admin command is a process of its own (about half a second on a busy machine).
setDefaultTimeout(60_000)

let env: AltTextEnv
let admin: (...args: string[]) => Promise<AdminResult>

beforeAll(async () => {
  env = await startAltTextEnv({ env: { ALTTEXT_FREE_CREDITS: '3' } })
  admin = adminOf(env.service, { ALTTEXT_FREE_CREDITS: '3' })
})
afterAll(async () => {
  await env?.stop()
})

const usage = (key: string) => env.service.api.get('/api/usage', key)
const validate = (key: string) => env.service.api.post('/api/validate-key', { api_key: key })
/**
 * Resolves once the running service answers GET /api/usage for this key as `expected` says. The service
 * polls for changes every 250 ms; the wait is not timed here (no timing assertions in tests).
 */
const usageBecomes = (key: string, expected: (res: Awaited<ReturnType<typeof usage>>) => boolean, what: string) =>
  waitUntil(async () => expected(await usage(key)), what)

describe('accounts list and show', () => {
  test('list: every account with plan, credits left of the total this period (as the console words it), active keys, created, last active and status', async () => {
    const account = await env.service.api.register()
    expect((await env.generate(freshImage(), account.apiKey)).status).toBe(200)
    expect((await env.service.api.post('/api/keys', { label: 'second' }, account.apiKey)).status).toBe(201)
    // The service writes last-used times once a second.
    let listed: any
    await waitUntil(async () => {
      listed = await adminJson(admin, 'accounts', 'list')
      return listed.accounts.find((a: any) => a.email === account.email)?.last_active_at !== null
    }, 'the last use to be written')
    const row = listed.accounts.find((a: any) => a.email === account.email)
    expect(row).toEqual({
      email: account.email,
      plan: 'free',
      status: 'active',
      credits: { total: 3, used: 1, remaining: 2, monthly: 3, granted: 0 },
      keys: 2,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      last_active_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      disabled_at: null,
    })
    const periodStart = new Date(listed.period_start)
    expect(periodStart.getUTCDate()).toBe(1)
    expect(new Date(listed.period_end).getUTCMonth()).toBe((periodStart.getUTCMonth() + 1) % 12)

    const text = await admin('accounts', 'list')
    expect(text.code).toBe(0)
    expect(text.stdout.split('\n')[0]).toMatch(/^EMAIL\s+PLAN\s+CREDITS LEFT\s+KEYS\s+CREATED\s+LAST ACTIVE\s+STATUS$/)
    // The console's "Credits left: 2 of 3".
    expect(text.stdout).toMatch(
      new RegExp(
        `${account.email.replaceAll('.', '\\.')}\\s+free\\s+2 of 3\\s+2\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\s+active`,
      ),
    )
  })

  test('show: the account with its active keys, in text and JSON', async () => {
    const account = await env.service.api.register()
    const shown = await adminJson(admin, 'accounts', 'show', account.email.toUpperCase())
    expect(shown.account).toMatchObject({ email: account.email, plan: 'free', status: 'active', keys: 1 })
    expect(shown.active_keys).toEqual([{ prefix: account.prefix, label: null, created_at: expect.any(String), expires_at: null, last_used_at: null }])
    const text = await admin('accounts', 'show', account.email)
    expect(text.code).toBe(0)
    expect(text.stdout).toContain(`email:        ${account.email}`)
    expect(text.stdout).toContain('credits left: 3 of 3 (3 a month); 0 used')
    expect(text.stdout).toContain(account.prefix)
  })
})

describe('accounts create', () => {
  test('without SMTP: prints the first key once; it works on the running service at once', async () => {
    const email = uniqueEmail('made')
    const made = await admin('accounts', 'create', email)
    expect(made.code).toBe(0)
    const key = made.stdout.match(/alt_[0-9a-f]{64}/)?.[0]
    expect(key).toBeDefined()
    expect(made.stdout).toContain('/forgot-password')
    const res = await usage(key!)
    expect(res.status).toBe(200)
    expect(res.body.plan).toBe('free')
    expect((await adminJson(admin, 'accounts', 'show', email)).account.keys).toBe(1)
  })

  test('--json gives the key and the prefix', async () => {
    const email = uniqueEmail('made-json')
    const made = await adminJson(admin, 'accounts', 'create', email)
    expect(made).toEqual({ email, plan: 'free', prefix: made.api_key.slice(0, 12), api_key: expect.stringMatching(/^alt_[0-9a-f]{64}$/), mailed: false })
    expect((await validate(made.api_key)).body).toEqual({ valid: true, plan: 'free', credits_total: 3, credits_used: 0, credits_remaining: 3 })
  })
})

describe('accounts create with SMTP', () => {
  let mailService: TestService
  let smtp: SmtpCapture
  beforeAll(async () => {
    smtp = await startSmtpCapture()
    mailService = await startTestService({ env: { ALTTEXT_SMTP_URL: smtp.url, ALTTEXT_MAIL_FROM: 'alttext@alttext.test', ALTTEXT_RATE_LIMITS: 'off' } })
  })
  afterAll(async () => {
    await mailService?.stop()
    await smtp?.stop()
  })

  test('mails a link to choose a password and prints no key; the link gives the person their key', async () => {
    const email = uniqueEmail('mailed')
    const made = await adminOf(mailService, { ALTTEXT_SMTP_URL: smtp.url, ALTTEXT_MAIL_FROM: 'alttext@alttext.test' })('accounts', 'create', email)
    expect(made.code).toBe(0)
    expect(made.stdout).not.toMatch(/alt_[0-9a-f]{64}/)
    expect(made.stdout).toContain('mailed')
    const mail = await smtp.waitForMail((m) => m.to.includes(email))
    expect(mail.subject).toBe('Your alttext account')
    const token = mail.text.match(/http:\/\/alttext\.test\/reset-password\?token=([\w-]+)/)?.[1]
    expect(token).toBeDefined()
    const reset = await mailService.api.post('/api/reset-password', { token, new_password: 'a password of my own' })
    expect(reset.status).toBe(200)
    expect((await mailService.api.get('/api/usage', reset.body.api_key)).status).toBe(200)
    expect((await mailService.api.post('/api/login', { email, password: 'a password of my own' })).status).toBe(200)
  })

  test('--print-key prints the key and sends no mail', async () => {
    const email = uniqueEmail('printed')
    const made = await adminOf(mailService, { ALTTEXT_SMTP_URL: smtp.url })('accounts', 'create', email, '--print-key')
    expect(made.code).toBe(0)
    const key = made.stdout.match(/alt_[0-9a-f]{64}/)?.[0]
    expect((await mailService.api.get('/api/usage', key)).status).toBe(200)
    expect(smtp.messages.some((m) => m.to.includes(email))).toBe(false)
  })
})

describe('disable and enable: seen by the running service within a second', () => {
  let account: RegisteredAccount
  let cookie: string
  beforeAll(async () => {
    account = await env.service.api.register()
    cookie = (await signIn(env.service, account.email, account.password)).cookie
    // The key and the session are known to the service (its key cache holds the key).
    expect((await usage(account.apiKey)).status).toBe(200)
    expect((await withSession(env.service, cookie, 'GET', '/api/usage')).status).toBe(200)
  })

  test('disable: the key gets 403 account_disabled, validate-key says invalid, the session ends, sign-in is refused', async () => {
    const result = await admin('accounts', 'disable', account.email)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('disabled')
    await usageBecomes(account.apiKey, (res) => res.status === 403, 'the key to be refused')
    const refused = await usage(account.apiKey)
    expect(refused.body.error.code).toBe('account_disabled')
    expect(refused.body.error.message).toContain('operator')
    expect(await validate(account.apiKey)).toMatchObject({ status: 401, body: { error: 'account disabled' } })
    expect((await withSession(env.service, cookie, 'GET', '/api/usage')).body.error.code).toBe('invalid_session')
    const login = await env.service.api.post('/api/login', { email: account.email, password: account.password })
    expect(login.status).toBe(403)
    expect(login.body.error.code).toBe('account_disabled')
    expect((await env.generate(freshImage(), account.apiKey)).status).toBe(403)
    expect((await adminJson(admin, 'accounts', 'show', account.email)).account).toMatchObject({ status: 'disabled', disabled_at: expect.any(String) })
  })

  test('enable: the same key works again, and the account signs in', async () => {
    const result = await admin('accounts', 'enable', account.email)
    expect(result.code).toBe(0)
    await usageBecomes(account.apiKey, (res) => res.status === 200, 'the key to work again')
    expect((await validate(account.apiKey)).body.valid).toBe(true)
    expect((await env.service.api.post('/api/login', { email: account.email, password: account.password })).status).toBe(200)
    expect((await adminJson(admin, 'accounts', 'show', account.email)).account).toMatchObject({ status: 'active', disabled_at: null })
  })

  test('disabling twice and enabling an enabled account succeed and say so', async () => {
    const other = await env.service.api.register()
    expect((await admin('accounts', 'enable', other.email)).stdout).toContain('already enabled')
    expect((await admin('accounts', 'disable', other.email)).code).toBe(0)
    const again = await admin('accounts', 'disable', other.email)
    expect(again.code).toBe(0)
    expect(again.stdout).toContain('already disabled')
  })
})

describe('plans and credits: usage and validate-key report them within a second', () => {
  test('plans set: the plan name and its monthly credits; plans reset: the free plan again', async () => {
    const account = await env.service.api.register()
    expect((await env.generate(freshImage(), account.apiKey)).status).toBe(200)
    expect((await usage(account.apiKey)).body.credits).toEqual({ total: 3, used: 1, remaining: 2 })

    const set = await admin('plans', 'set', account.email, '--credits', '500', '--name', 'team')
    expect(set.code).toBe(0)
    expect(set.stdout).toContain('plan team; this period credits left: 499 of 500 (500 a month); 1 used')
    await usageBecomes(account.apiKey, (res) => res.body.plan === 'team', 'the new plan')
    expect((await usage(account.apiKey)).body.credits).toEqual({ total: 500, used: 1, remaining: 499 })
    expect((await validate(account.apiKey)).body).toEqual({ valid: true, plan: 'team', credits_total: 500, credits_used: 1, credits_remaining: 499 })
    const cookie = (await signIn(env.service, account.email, account.password)).cookie
    expect((await withSession(env.service, cookie, 'GET', '/api/session')).body.plan).toBe('team')
    expect((await env.service.api.post('/api/login', { email: account.email, password: account.password })).body).toMatchObject({
      plan: 'team',
      credits: { total: 500, used: 1, remaining: 499 },
    })

    expect((await admin('plans', 'set', account.email, '--credits', '20')).stdout).toContain('plan custom')
    await usageBecomes(account.apiKey, (res) => res.body.plan === 'custom', 'the default plan name')
    expect((await usage(account.apiKey)).body.credits.total).toBe(20)

    expect((await admin('plans', 'reset', account.email)).code).toBe(0)
    await usageBecomes(account.apiKey, (res) => res.body.plan === 'free', 'the free plan again')
    expect((await usage(account.apiKey)).body.credits).toEqual({ total: 3, used: 1, remaining: 2 })
  })

  test('credits grant: an account out of credits generates again, exactly as many more as granted', async () => {
    const account = await env.service.api.register()
    for (let i = 0; i < 3; i++) expect((await env.generate(freshImage(), account.apiKey)).status).toBe(200)
    expect((await env.generate(freshImage(), account.apiKey)).body.error.code).toBe('quota_exceeded')

    const grant = await admin('credits', 'grant', account.email, '2')
    expect(grant.code).toBe(0)
    expect(grant.stdout).toContain('granted 2 credits')
    expect(grant.stdout).toContain('this period credits left: 2 of 5 (3 a month + 2 granted); 3 used')
    await usageBecomes(account.apiKey, (res) => res.body.credits.total === 5, 'the grant')
    expect((await usage(account.apiKey)).body.credits).toEqual({ total: 5, used: 3, remaining: 2 })
    expect((await validate(account.apiKey)).body).toMatchObject({ credits_total: 5, credits_used: 3, credits_remaining: 2 })

    const answers = await Promise.all([1, 2, 3].map(() => env.generate(freshImage(), account.apiKey)))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 429])
    expect((await usage(account.apiKey)).body.credits).toEqual({ total: 5, used: 5, remaining: 0 })
    expect((await adminJson(admin, 'accounts', 'show', account.email)).account.credits).toEqual({ total: 5, used: 5, remaining: 0, monthly: 3, granted: 2 })
  })

  test('a grant while generations are charged loses none of either', async () => {
    const account = await env.service.api.register()
    expect((await admin('plans', 'set', account.email, '--credits', '100')).code).toBe(0)
    await usageBecomes(account.apiKey, (res) => res.body.credits.total === 100, 'the plan')
    // Charges and grants write the same row from two processes at once.
    const [answers, grants] = await Promise.all([
      Promise.all(Array.from({ length: 6 }, () => env.generate(freshImage(), account.apiKey))),
      Promise.all([admin('credits', 'grant', account.email, '5'), admin('credits', 'grant', account.email, '7')]),
    ])
    expect(answers.every((a) => a.status === 200)).toBe(true)
    expect(grants.map((g) => g.code)).toEqual([0, 0])
    await usageBecomes(account.apiKey, (res) => res.body.credits.total === 112, 'both grants')
    expect((await usage(account.apiKey)).body.credits).toEqual({ total: 112, used: 6, remaining: 106 })
  })
})

describe('the change log', () => {
  test('more changes than the log keeps: the service forgets every account it kept, and still sees the last change', async () => {
    const account = await env.service.api.register()
    expect((await usage(account.apiKey)).body.credits.total).toBe(3)
    // Another process (a sqlite3 shell, say) changes the plan 1001 times in one transaction.
    const db = new Database(env.service.dbPath)
    try {
      const update = db.query('UPDATE accounts SET monthly_credits = ? WHERE email = ?')
      db.transaction(() => {
        for (let credits = 1; credits <= 1001; credits++) update.run(credits, account.email)
      })()
    } finally {
      db.close()
    }
    await usageBecomes(account.apiKey, (res) => res.body.credits?.total === 1001, 'the last change')
    expect(
      env.service.logs.some((line) => line.msg === 'account changes were dropped before this process read them; forgetting every account kept in memory'),
    ).toBe(true)
  })
})

describe('accounts delete', () => {
  test('--yes deletes the account: its key is refused within a second, and the email can register anew from zero', async () => {
    const account = await env.service.api.register()
    expect((await env.generate(freshImage(), account.apiKey)).status).toBe(200)
    // The service writes its history in the background: write it now rather than wait for the next flush.
    const historyRows = () => {
      const db = new Database(env.service.dbPath, { readonly: true })
      try {
        const row = db.query('SELECT count(*) AS n FROM generation_history h JOIN accounts a ON a.id = h.account_id WHERE a.email = ?').get(account.email) as {
          n: number
        }
        return row.n
      } finally {
        db.close()
      }
    }
    await env.service.running.history.flush()
    expect(historyRows()).toBe(1)
    const deleted = await admin('accounts', 'delete', account.email, '--yes')
    expect(deleted.code).toBe(0)
    expect(deleted.stdout).toContain(`deleted ${account.email} with 1 API key, 0 sessions and 1 history entry`)
    await usageBecomes(account.apiKey, (res) => res.status === 401, 'the key to be refused')
    expect((await usage(account.apiKey)).body.error.code).toBe('invalid_api_key')
    expect((await adminJson(admin, 'accounts', 'list')).accounts.some((a: any) => a.email === account.email)).toBe(false)

    const again = await env.service.api.register(account.email)
    expect((await usage(again.apiKey)).body.credits).toEqual({ total: 3, used: 0, remaining: 3 })
  })
})

describe('--help', () => {
  const commands = [
    [],
    ['accounts'],
    ['accounts', 'list'],
    ['accounts', 'show'],
    ['accounts', 'create'],
    ['accounts', 'disable'],
    ['accounts', 'enable'],
    ['accounts', 'delete'],
    ['plans', 'set'],
    ['plans', 'reset'],
    ['credits', 'grant'],
  ]
  for (const command of commands) {
    test(`alttext admin ${[...command, '--help'].join(' ')}`, async () => {
      const result = await admin(...command, '--help')
      expect(result.code).toBe(0)
      expect(result.stdout).toStartWith(`Usage: alttext admin ${command.length === 2 ? command.join(' ') : command.length === 1 ? command[0] : 'COMMAND'}`)
      expect(result.stdout).toContain('--db FILE')
      expect(result.stderr).toBe('')
    })
  }

  test('alttext --help names the admin command', async () => {
    const { runCommand } = await import('../support/process')
    const result = await runCommand(['--help'])
    expect(result.stdout).toContain('alttext admin')
    expect(result.stdout).toContain('ALTTEXT_REGISTRATION')
  })
})
