// `alttext doctor` against a healthy set-up (a fake Ollama, a migrated database, a loopback SMTP relay,
// a public URL that matches the listen address): every check passes, exit 0, the built-in image went to
// the model, and nothing was mailed.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { startFakeOpenAi } from '../support/fake-openai'
import { runCli, spawnService } from '../support/process'
import { startSmtpCapture, type SmtpCapture } from '../support/smtp'
import { freshDir, makeDatabase } from './backup-support'
import { byId, doctorJson, doctorText, healthyEnv } from './doctor-support'

// The command runs in-process (runCli); the service of a test is a subprocess: room for a loaded machine.
setDefaultTimeout(30_000)

let dir: string
let fake: FakeOllama
let smtp: SmtpCapture
let env: Record<string, string>

beforeAll(async () => {
  dir = freshDir('doctor-happy')
  await makeDatabase(`${dir}/alttext.db`, 2)
  fake = await startFakeOllama({ models: ['llava:latest'], reply: 'A red square on a white background.' })
  smtp = await startSmtpCapture()
  env = healthyEnv(dir, fake.url, smtp.url)
})
afterAll(async () => {
  await fake.stop()
  await smtp.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('a healthy set-up', () => {
  test('a relative ALTTEXT_DB is the file in the folder the command runs in', async () => {
    const run = await runCli(['doctor', '--json'], { ...env, ALTTEXT_DB: 'alttext.db' }, { cwd: dir })
    const [database] = byId(JSON.parse(run.stdout), 'database')
    expect(database?.status).toBe('pass')
    expect(database?.detail).toStartWith(`${dir}/alttext.db (`)
  })

  test('every line PASS, with what it found; exit 0', async () => {
    const run = await doctorText(env)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toStartWith('alttext doctor ')
    expect(run.stdout).not.toMatch(/^(FAIL|SKIP)/m)
    expect(run.line('configuration')).toStartWith('PASS  configuration: valid; model llava (ollama API) on 1 host')
    expect(run.line('database')).toStartWith(`PASS  database: ${dir}/alttext.db (`)
    expect(run.line('database')).toContain('no alttext process is serving it now')
    expect(run.line('database writable')).toStartWith('PASS  database writable: a write committed;')
    expect(run.line('database schema')).toMatch(/^PASS {2}database schema: version \d+, this binary's$/)
    expect(run.line('database integrity')).toBe('PASS  database integrity: quick_check ok')
    expect(run.line(`model host ${fake.url}`)).toBe(`PASS  model host ${fake.url}: model llava present at ${fake.url} (ollama API)`)
    expect(run.line(`test generation on ${fake.url}`)).toMatch(/^PASS {2}test generation on \S+: "A red square on a white background\." in \d+\.\d\d s$/)
    expect(run.line('mail (SMTP)')).toBe(`PASS  mail (SMTP): 127.0.0.1:${smtp.port} answered EHLO`)
    expect(run.line('public URL')).toBe('PASS  public URL: http://127.0.0.1:3999, on this machine only (listens on 127.0.0.1:3999)')
    expect(run.line('clock')).toMatch(/^PASS {2}clock: \S+Z here; newest database record \S+Z; the model server at \S+ agrees within \d+ s$/)
    expect(run.stdout).toContain('\n10 checks: 10 passed, 0 failed, 0 skipped\n')
  })

  test('the test generation sent the built-in image (a 256 px PNG) with the service prompt; the SMTP check mailed nothing', async () => {
    fake.reset()
    const run = await doctorText(env)
    expect(run.code).toBe(0)
    const chats = fake.requests.filter((r) => r.path === '/api/chat')
    expect(chats).toHaveLength(1)
    expect(chats[0]!.images).toHaveLength(1)
    expect(chats[0]!.images[0]).toMatchObject({ format: 'png', width: 256, height: 256 })
    const body = chats[0]!.body as { model: string; messages: { role: string; content: string }[] }
    expect(body.model).toBe('llava')
    expect(body.messages[0]!.role).toBe('system')
    expect(body.messages[0]!.content).toContain('alt text')
    expect(smtp.messages).toHaveLength(0)
  })

  test('--json: ok, counts, and each check with id, name, status and detail; the generation timed', async () => {
    const { code, report } = await doctorJson(env)
    expect(code).toBe(0)
    expect(report).toMatchObject({ ok: true, passed: 10, failed: 0, skipped: 0 })
    expect(report.checks.map((check) => check.id)).toEqual([
      'configuration',
      'database',
      'database_writable',
      'database_schema',
      'database_integrity',
      'model_host',
      'test_generation',
      'mail',
      'public_url',
      'clock',
    ])
    for (const check of report.checks) {
      expect(check.status).toBe('pass')
      expect(check.fix).toBeUndefined()
    }
    expect(byId(report, 'test_generation')[0]!.ms).toBeGreaterThanOrEqual(0)
  })

  test('while the service runs on the database: it says so, and everything still passes', async () => {
    const service = await spawnService({ ...env, PORT: '0' })
    try {
      const run = await doctorText(env)
      expect(run.code).toBe(0)
      expect(run.line('database')).toContain('an alttext process is serving it')
      expect(run.line('database writable')).toStartWith('PASS')
      const health = await fetch(`${service.url}/health`)
      expect(health.status).toBe(200)
    } finally {
      service.proc.kill('SIGTERM')
      await service.exited
    }
  })

  test('two model hosts: each is checked and generates once; --db picks the database', async () => {
    const second = await startFakeOllama({ models: ['llava'], reply: 'A red square.' })
    try {
      const other = freshDir('doctor-db')
      await makeDatabase(`${other}/other.db`, 1)
      const { code, report } = await doctorJson({ ...env, ALTTEXT_MODEL_HOSTS: `${fake.url},${second.url}` }, ['--db', `${other}/other.db`])
      expect(code).toBe(0)
      expect(byId(report, 'model_host').map((check) => check.name)).toEqual([`model host ${fake.url}`, `model host ${second.url}`])
      expect(byId(report, 'test_generation').map((check) => check.detail.split(' in ')[0])).toEqual([
        '"A red square on a white background."',
        '"A red square."',
      ])
      expect(byId(report, 'database')[0]!.detail).toStartWith(`${other}/other.db (`)
      rmSync(other, { recursive: true, force: true })
    } finally {
      await second.stop()
    }
  })

  test('an OpenAI-compatible model server (ALTTEXT_MODEL_API=openai) with a key passes the same checks', async () => {
    const openai = await startFakeOpenAi({ models: [{ id: 'qwen2.5-vl', input_modalities: ['text', 'image'] }], apiKey: 'sk-local-test' })
    try {
      const { code, report } = await doctorJson({
        ...env,
        OLLAMA_HOST: openai.url,
        ALTTEXT_MODEL_API: 'openai',
        ALTTEXT_MODEL: 'qwen2.5-vl',
        ALTTEXT_MODEL_API_KEY: 'sk-local-test',
      })
      expect(report.checks.filter((check) => check.status !== 'pass')).toEqual([])
      expect(code).toBe(0)
      expect(byId(report, 'model_host')[0]!.detail).toContain('(openai API)')
      expect(openai.chatRequests()).toHaveLength(1)
    } finally {
      await openai.stop()
    }
  })

  test('without ALTTEXT_SMTP_URL the mail check is skipped, not failed: exit 0', async () => {
    const { ALTTEXT_SMTP_URL: _unset, ...withoutMail } = env
    const run = await doctorText(withoutMail)
    expect(run.code).toBe(0)
    expect(run.line('mail (SMTP)')).toBe("SKIP  mail (SMTP): ALTTEXT_SMTP_URL is not set: password-reset links go to the service's log")
    expect(run.stdout).toContain('10 checks: 9 passed, 0 failed, 1 skipped')
  })

  test('--help: usage, what it checks, the exit codes and the variables; exit 0', async () => {
    const run = await doctorText({}, ['--help'])
    expect(run.code).toBe(0)
    expect(run.stdout).toStartWith('Usage: alttext doctor [options]')
    expect(run.stdout).toContain('--json')
    expect(run.stdout).toContain('ALTTEXT_MODEL_HOSTS')
    expect(run.stdout).toContain('Exit codes: 0 no check failed (each passed, warned, or was skipped as not configured)')
  })
})
