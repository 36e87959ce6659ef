// `alttext doctor` prints no secret (the SMTP password, the model API key), passing or failing, as text or
// JSON; and it changes nothing in the database but the readiness probe's row.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { startFakeOpenAi } from '../support/fake-openai'
import { startSmtpCapture, type SmtpCapture } from '../support/smtp'
import { alttext, freshDir, makeDatabase } from './backup-support'
import { doctorText, healthyEnv } from './doctor-support'

// Each test runs the command and fake servers: room for a loaded machine.
setDefaultTimeout(30_000)

let dir: string
let fake: FakeOllama
let smtp: SmtpCapture
let env: Record<string, string>

beforeAll(async () => {
  dir = freshDir('doctor-security')
  await makeDatabase(join(dir, 'alttext.db'), 3)
  fake = await startFakeOllama({ models: ['llava'] })
  smtp = await startSmtpCapture()
  env = healthyEnv(dir, fake.url)
})
afterAll(async () => {
  await fake.stop()
  await smtp.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** Both outputs of the doctor, as text and as JSON. */
async function everything(runEnv: Record<string, string>): Promise<string> {
  const [text, json] = await Promise.all([alttext(['doctor'], runEnv), alttext(['doctor', '--json'], runEnv)])
  return [text.stdout, text.stderr, json.stdout, json.stderr].join('\n')
}

describe('secrets stay out of the output', () => {
  const password = 'smtp-Pa55word-do-not-print'

  test('the SMTP password: not printed when the relay accepts the login', async () => {
    const smtpUrl = `smtp://mailer:${password}@127.0.0.1:${smtp.port}`
    const output = await everything({ ...env, ALTTEXT_SMTP_URL: smtpUrl })
    expect(output).toContain(`PASS  mail (SMTP): 127.0.0.1:${smtp.port} answered EHLO and accepted the login`)
    expect(output).not.toContain(password)
  })

  test('the SMTP password: not printed when the relay cannot be reached', async () => {
    const output = await everything({ ...env, ALTTEXT_SMTP_URL: `smtps://mailer:${password}@127.0.0.1:9` })
    expect(output).toContain('FAIL  mail (SMTP): 127.0.0.1:9:')
    expect(output).not.toContain(password)
  })

  test('the model API key: not printed when accepted, nor when refused', async () => {
    const key = 'sk-local-Secret-0123456789'
    const openai = await startFakeOpenAi({ models: [{ id: 'llava', input_modalities: ['text', 'image'] }], apiKey: key })
    try {
      const base = { ...env, OLLAMA_HOST: openai.url, ALTTEXT_MODEL_API: 'openai' }
      const accepted = await everything({ ...base, ALTTEXT_MODEL_API_KEY: key })
      expect(accepted).toContain(`PASS  model host ${openai.url}`)
      expect(accepted).not.toContain(key)
      const wrong = 'sk-local-Wrong-9876543210'
      const refused = await everything({ ...base, ALTTEXT_MODEL_API_KEY: wrong })
      expect(refused).toContain(`FAIL  model host ${openai.url}`)
      expect(refused).toContain('ALTTEXT_MODEL_API_KEY')
      expect(refused).not.toContain(wrong)
      expect(refused).not.toContain(key)
      // The key travelled only as the bearer token, never in a path or a body.
      expect(openai.requests.filter((r) => r.headers.authorization === `Bearer ${key}`).length).toBeGreaterThan(0)
      for (const request of openai.requests) {
        expect(request.rawBody).not.toContain(key)
        expect(request.path).not.toContain(key)
      }
    } finally {
      await openai.stop()
    }
  })
})

describe('the database', () => {
  /** Every row of every table but the readiness probe's, as text. */
  function contents(path: string): string {
    const db = new Database(path, { readonly: true })
    try {
      const tables = db
        .query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name != 'health_probe' ORDER BY name")
        .all()
        .map((r) => r.name)
      return JSON.stringify(tables.map((table) => [table, db.query(`SELECT * FROM "${table}"`).all()]))
    } finally {
      db.close()
    }
  }

  test('a run changes nothing but the probe row /ready writes too; no account, credit or history for the test generation', async () => {
    const path = join(dir, 'alttext.db')
    const before = contents(path)
    const run = await doctorText(env)
    expect(run.code).toBe(0)
    expect(run.line(`test generation on ${fake.url}`)).toStartWith('PASS')
    expect(contents(path)).toBe(before)
    const db = new Database(path, { readonly: true })
    const probe = db.query<{ checked_at: number }, []>('SELECT checked_at FROM health_probe WHERE id = 1').get()!
    db.close()
    expect(probe.checked_at).toBeGreaterThan(Date.now() - 60_000)
  })
})
