// Configuration and the command line: --help, --version, defaults of loadConfig, OLLAMA_HOST forms,
// and the database directory being created.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { loadConfig } from '../../src/config'
import { REPO_ROOT, runCommand } from '../support/process'
import { startTestService } from '../support/service'

const DECIDED_VARIABLES = [
  'PORT',
  'HOST',
  'ALTTEXT_DB',
  'OLLAMA_HOST',
  'ALTTEXT_MODEL',
  'ALTTEXT_MODEL_CONCURRENCY',
  'ALTTEXT_PUBLIC_URL',
  'ALTTEXT_SMTP_URL',
  'ALTTEXT_MAIL_FROM',
  'ALTTEXT_TRUST_PROXY',
  'ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS',
  'ALTTEXT_FREE_CREDITS',
  'ALTTEXT_RATE_LIMITS',
  'NODE_EXTRA_CA_CERTS',
  'ALTTEXT_DATABASE_URL',
  'ALTTEXT_BATCH_LEASE_SECONDS',
]

let tmp: string
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'alttext-config-'))
})
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true })
})

describe('alttext --help', () => {
  test('lists every configuration variable of the decisions and exits 0', async () => {
    const { code, stdout } = await runCommand(['--help'])
    expect(code).toBe(0)
    for (const name of DECIDED_VARIABLES) expect(stdout).toMatch(new RegExp(`(^|\\s)${name}\\b`, 'm'))
    // It shows the defaults of the decisions table.
    expect(stdout).toContain('3000')
    expect(stdout).toContain('./data/alttext.db')
    expect(stdout).toContain('http://127.0.0.1:11434')
    expect(stdout).toContain('llava')
  })

  test('does not start the server', async () => {
    const { code, stdout, stderr } = await runCommand(['--help'], { PORT: '0', HOST: '127.0.0.1', ALTTEXT_DB: join(tmp, 'help', 'alttext.db') })
    expect(code).toBe(0)
    expect(stdout + stderr).not.toContain('"msg":"listening"')
    expect(existsSync(join(tmp, 'help'))).toBe(false)
  })
})

/** The checkout's commit as --version names it. */
const headCommit = () => Bun.spawnSync(['git', 'rev-parse', '--short=12', 'HEAD'], { cwd: REPO_ROOT }).stdout.toString().trim()

describe('alttext --version', () => {
  test("from source: the version of package.json and the checkout's commit, and that it is not a build; exit 0", async () => {
    const { code, stdout } = await runCommand(['--version'])
    expect(code).toBe(0)
    expect(headCommit()).toMatch(/^[0-9a-f]{12}$/)
    expect(stdout.trim()).toBe(`alttext ${pkg.version} (commit ${headCommit()}, from source, not built)`)
  })

  test('from source outside a git checkout: the commit is "unknown"', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'alttext-nogit-'))
    try {
      cpSync(join(REPO_ROOT, 'src'), join(copy, 'src'), { recursive: true })
      cpSync(join(REPO_ROOT, 'package.json'), join(copy, 'package.json'))
      symlinkSync(join(REPO_ROOT, 'node_modules'), join(copy, 'node_modules'))
      const { code, stdout } = await runCommand(['--version'], { GIT_CEILING_DIRECTORIES: tmpdir() }, [process.execPath, join(copy, 'src', 'main.ts')], copy)
      expect(code).toBe(0)
      expect(stdout.trim()).toBe(`alttext ${pkg.version} (commit unknown, from source, not built)`)
    } finally {
      rmSync(copy, { recursive: true, force: true })
    }
  })

  test('the binary of the build script: the commit and the build date baked in', async () => {
    const out = mkdtempSync(join(tmpdir(), 'alttext-build-'))
    try {
      // package.json's own build command, writing elsewhere than dist/.
      const command = pkg.scripts.build.replace('--outfile dist/alttext', `--outfile ${join(out, 'alttext')}`)
      expect(command).not.toBe(pkg.scripts.build)
      const before = Date.now()
      const built = Bun.spawnSync(['sh', '-c', command], { cwd: REPO_ROOT, stdout: 'pipe', stderr: 'pipe' })
      expect({ code: built.exitCode, stderr: built.exitCode === 0 ? '' : built.stderr.toString() }).toEqual({ code: 0, stderr: '' })
      // From another folder, with no git to ask: the answer is the one baked in.
      const { code, stdout } = await runCommand(['--version'], { PATH: '/nonexistent' }, [join(out, 'alttext')], out)
      expect(code).toBe(0)
      const match = /^alttext (\S+) \(commit ([0-9a-f]{12}), built (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\)$/.exec(stdout.trim())
      expect(match?.slice(1, 3)).toEqual([pkg.version, headCommit()])
      expect(Date.parse(match![3]!)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('loadConfig defaults match the decisions table', () => {
  test('an empty environment', () => {
    const config = loadConfig({})
    expect(config.port).toBe(3000)
    // Loopback only, both families: nobody else on the network reaches an open registration.
    expect(config.host).toBe('localhost')
    expect(config.listenAddresses).toEqual(['127.0.0.1', '::1'])
    expect(config.ipv4Fallback).toBeNull()
    expect(config.dbPath).toBe('./data/alttext.db')
    expect(config.ollamaHost).toBe('http://127.0.0.1:11434')
    expect(config.model).toBe('llava')
    expect(config.modelConcurrency).toBe(2)
    expect(config.publicUrl).toBe('http://localhost:3000')
    expect(config.smtpUrl).toBeUndefined()
    expect(config.trustProxyHops).toBe(0)
    expect(config.allowPrivateImageHosts).toEqual([])
    expect(config.freeCredits).toBe(50)
    expect(config.rateLimits).toBe(true)
    expect(config.extraCaCerts).toBeUndefined()
    expect(config.cacheScope).toBe('account')
    // SQLite unless a PostgreSQL URL is given.
    expect(config.databaseUrl).toBeUndefined()
    expect(config.batchLeaseSeconds).toBe(60)
  })

  test('the public URL defaults to http://localhost:<PORT>', () => {
    expect(loadConfig({ PORT: '8080' }).publicUrl).toBe('http://localhost:8080')
  })

  test('empty values count as unset', () => {
    const config = loadConfig({ PORT: '', ALTTEXT_MODEL: '', ALTTEXT_FREE_CREDITS: '', ALTTEXT_RATE_LIMITS: '', OLLAMA_HOST: '' })
    expect(config.port).toBe(3000)
    expect(config.model).toBe('llava')
    expect(config.freeCredits).toBe(50)
    expect(config.rateLimits).toBe(true)
    expect(config.ollamaHost).toBe('http://127.0.0.1:11434')
  })
})

describe('the default listen address (HOST unset)', () => {
  test('is loopback, IPv4 and IPv6: the server answers on 127.0.0.1 and on [::1], each client seen as itself', async () => {
    const service = await startTestService({ env: { HOST: '' } })
    try {
      const port = service.running.server.port
      // The access log names an IPv6 client by its /64, as the rate limits count it.
      for (const [host, client] of [
        ['127.0.0.1', '127.0.0.1'],
        ['[::1]', '0:0:0:0::/64'],
      ] as const) {
        const res = await fetch(`http://${host}:${port}/health`, { headers: { 'x-request-id': `loopback-${host.replace(/\W/g, '')}` } })
        expect({ host, status: res.status }).toEqual({ host, status: 200 })
        // Loopback clients may read /metrics: the peer address is read on either socket.
        expect({ host, metrics: (await fetch(`http://${host}:${port}/metrics`)).status }).toEqual({ host, metrics: 200 })
        expect((await service.accessLine(`loopback-${host.replace(/\W/g, '')}`)).client).toBe(client)
      }
      const listening = service.logs.find((line) => line.msg === 'listening')!
      expect(listening).toMatchObject({
        url: `http://localhost:${port}/`,
        docs: `http://localhost:${port}/docs`,
        reach: 'only this machine can reach it; set HOST=:: to listen on every address',
        addresses: ['127.0.0.1', '::1'],
      })
    } finally {
      await service.stop()
    }
  })

  test('stops both sockets: neither address answers after stop()', async () => {
    const service = await startTestService({ env: { HOST: '' } })
    const port = service.running.server.port
    await service.stop()
    for (const host of ['127.0.0.1', '[::1]'])
      expect(
        await fetch(`http://${host}:${port}/health`).then(
          () => 'answered',
          () => 'refused',
        ),
      ).toBe('refused')
  })

  test('another process on [::1] of the port: the service does not start and says which address and what to set', async () => {
    const holder = Bun.serve({ hostname: '::1', port: 0, fetch: () => new Response('someone else') })
    try {
      const started = startTestService({ env: { HOST: '', PORT: String(holder.port) } })
      await expect(started).rejects.toThrow(`port ${holder.port} is in use on ::1 by another process: stop it, or set HOST to one address (HOST=127.0.0.1)`)
      // Its IPv4 socket was closed again.
      expect(
        await fetch(`http://127.0.0.1:${holder.port}/health`).then(
          () => 'answered',
          () => 'refused',
        ),
      ).toBe('refused')
    } finally {
      await holder.stop(true)
    }
  })
})

describe('HOST=:: (every address)', () => {
  // Only loopback addresses are ever sent to, although the service listens on every address.
  test('answers on [::1] and on 127.0.0.1 through one dual-stack socket; the log says other machines can reach it', async () => {
    const service = await startTestService({ env: { HOST: '::' } })
    try {
      const port = service.running.server.port
      for (const host of ['127.0.0.1', '[::1]']) {
        const res = await fetch(`http://${host}:${port}/health`)
        expect({ host, status: res.status }).toEqual({ host, status: 200 })
        // An IPv4 client on the dual-stack socket is its IPv4 address: loopback may read /metrics.
        expect({ host, metrics: (await fetch(`http://${host}:${port}/metrics`)).status }).toEqual({ host, metrics: 200 })
      }
      await fetch(`http://127.0.0.1:${port}/health`, { headers: { 'x-request-id': 'dual-stack-v4' } })
      expect((await service.accessLine('dual-stack-v4')).client).toBe('127.0.0.1')
      expect(service.logs.find((line) => line.msg === 'listening')).toMatchObject({
        url: `http://localhost:${port}/`,
        reach: 'every address of this machine: other machines can reach it',
        addresses: ['::'],
      })
    } finally {
      await service.stop()
    }
  })

  test('falls back to 0.0.0.0, with a warning, when [::] cannot be listened on', async () => {
    // [::] of this port is taken (IPv6 only), as if the machine had no IPv6 for us: IPv4 still works.
    const holder = Bun.serve({ hostname: '::', port: 0, ipv6Only: true, fetch: () => new Response('someone else') })
    try {
      const service = await startTestService({ env: { HOST: '::', PORT: String(holder.port) } })
      try {
        expect(await (await fetch(`http://127.0.0.1:${holder.port}/health`)).json()).toMatchObject({ status: 'ok' })
        expect(service.logs.find((line) => line.level === 'warn' && String(line.msg).includes('IPv4 only'))).toBeDefined()
      } finally {
        await service.stop()
      }
    } finally {
      await holder.stop(true)
    }
  })
})

describe('loadConfig reads set values', () => {
  test('each variable of the table', () => {
    const caDir = mkdtempSync(join(tmpdir(), 'alttext-ca-'))
    const caPath = join(caDir, 'internal-ca.pem')
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
    writeFileSync(caPath, pem)
    const config = loadConfig({
      PORT: '8081',
      HOST: '127.0.0.1',
      ALTTEXT_DB: '/var/lib/alttext/db.sqlite',
      OLLAMA_HOST: 'http://ollama.internal:11500',
      ALTTEXT_MODEL: 'llava:13b',
      ALTTEXT_MODEL_CONCURRENCY: '4',
      ALTTEXT_PUBLIC_URL: 'https://alt.example.org/',
      ALTTEXT_SMTP_URL: 'smtp://user:pass@mail.example.org:587',
      ALTTEXT_MAIL_FROM: 'noreply@example.org',
      ALTTEXT_TRUST_PROXY: '2',
      ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: 'images.intranet, 10.0.0.0/8,192.168.1.20',
      ALTTEXT_FREE_CREDITS: '500',
      ALTTEXT_RATE_LIMITS: 'off',
      NODE_EXTRA_CA_CERTS: caPath,
      ALTTEXT_CACHE_TTL_DAYS: '7',
      ALTTEXT_IMAGE_MAX_SIDE: '768',
      ALTTEXT_CACHE_SCOPE: 'Shared',
    })
    rmSync(caDir, { recursive: true, force: true })
    expect(config.port).toBe(8081)
    expect(config.host).toBe('127.0.0.1')
    // A host that was asked for is used as it is, or start-up fails.
    expect(config.ipv4Fallback).toBeNull()
    expect(config.dbPath).toBe('/var/lib/alttext/db.sqlite')
    expect(config.ollamaHost).toBe('http://ollama.internal:11500')
    expect(config.model).toBe('llava:13b')
    expect(config.modelConcurrency).toBe(4)
    // No trailing slash, so `docs` links are <public url>/docs/errors#code.
    expect(config.publicUrl).toBe('https://alt.example.org')
    expect(config.smtpUrl).toBe('smtp://user:pass@mail.example.org:587')
    expect(config.mailFrom).toBe('noreply@example.org')
    expect(config.trustProxyHops).toBe(2)
    expect(config.allowPrivateImageHosts).toEqual(['images.intranet', '10.0.0.0/8', '192.168.1.20'])
    expect(config.freeCredits).toBe(500)
    expect(config.rateLimits).toBe(false)
    expect(config.extraCaCerts).toBe(caPath)
    expect(config.extraCaPem).toBe(pem)
    expect(config.cacheTtlDays).toBe(7)
    expect(config.imageMaxSide).toBe(768)
    expect(config.cacheScope).toBe('shared')
  })

  test('ALTTEXT_DATABASE_URL takes postgres:// and postgresql:// with an sslmode; ALTTEXT_BATCH_LEASE_SECONDS 5 to 3600', () => {
    for (const url of [
      'postgres://alttext:pw@db.internal:5432/alttext',
      'postgresql://alttext@127.0.0.1/alttext?sslmode=verify-full',
      'postgres://alttext:p%40ss%2Fw@[::1]:6432/alt_text?sslmode=disable',
    ])
      expect(loadConfig({ ALTTEXT_DATABASE_URL: ` ${url} ` }).databaseUrl).toBe(url)
    expect(loadConfig({ ALTTEXT_BATCH_LEASE_SECONDS: '5' }).batchLeaseSeconds).toBe(5)
    expect(loadConfig({ ALTTEXT_BATCH_LEASE_SECONDS: '3600' }).batchLeaseSeconds).toBe(3600)
  })

  test('ALTTEXT_FREE_CREDITS=0 is allowed (a plan with no free credits)', () => {
    expect(loadConfig({ ALTTEXT_FREE_CREDITS: '0' }).freeCredits).toBe(0)
  })

  test('ALTTEXT_RATE_LIMITS accepts on and off', () => {
    expect(loadConfig({ ALTTEXT_RATE_LIMITS: 'on' }).rateLimits).toBe(true)
    expect(loadConfig({ ALTTEXT_RATE_LIMITS: 'off' }).rateLimits).toBe(false)
  })
})

describe('OLLAMA_HOST as the Ollama CLI reads it', () => {
  /** The port a URL really connects to. */
  const effectivePort = (url: string) => {
    const u = new URL(url)
    return u.port || (u.protocol === 'https:' ? '443' : '80')
  }

  test('host:port', () => {
    const url = new URL(loadConfig({ OLLAMA_HOST: 'gpu-box:11500' }).ollamaHost)
    expect(url.protocol).toBe('http:')
    expect(url.hostname).toBe('gpu-box')
    expect(effectivePort(url.href)).toBe('11500')
  })

  test('a bare host gets http and the default port 11434', () => {
    const url = new URL(loadConfig({ OLLAMA_HOST: 'gpu-box' }).ollamaHost)
    expect(url.protocol).toBe('http:')
    expect(url.hostname).toBe('gpu-box')
    expect(effectivePort(url.href)).toBe('11434')
  })

  test('a bare IP address, and 0.0.0.0 as people set it for `ollama serve`', () => {
    expect(loadConfig({ OLLAMA_HOST: '10.1.2.3' }).ollamaHost).toBe('http://10.1.2.3:11434')
    expect(loadConfig({ OLLAMA_HOST: '0.0.0.0' }).ollamaHost).toBe('http://0.0.0.0:11434')
    expect(loadConfig({ OLLAMA_HOST: '0.0.0.0:11434' }).ollamaHost).toBe('http://0.0.0.0:11434')
  })

  test('an IPv6 address in brackets', () => {
    const url = new URL(loadConfig({ OLLAMA_HOST: '[::1]:11500' }).ollamaHost)
    expect(url.hostname).toBe('[::1]')
    expect(effectivePort(url.href)).toBe('11500')
  })

  test('a full URL with a port is kept', () => {
    expect(loadConfig({ OLLAMA_HOST: 'http://127.0.0.1:11434' }).ollamaHost).toBe('http://127.0.0.1:11434')
    expect(effectivePort(loadConfig({ OLLAMA_HOST: 'https://ollama.example.org:8443' }).ollamaHost)).toBe('8443')
  })

  test("an explicit scheme without a port uses that scheme's port (80 or 443), as the Ollama CLI does", () => {
    expect(effectivePort(loadConfig({ OLLAMA_HOST: 'https://ollama.example.org' }).ollamaHost)).toBe('443')
    expect(effectivePort(loadConfig({ OLLAMA_HOST: 'http://ollama.example.org' }).ollamaHost)).toBe('80')
  })

  test('surrounding whitespace and a trailing slash are ignored', () => {
    expect(loadConfig({ OLLAMA_HOST: '  gpu-box:11500/ ' }).ollamaHost).toBe('http://gpu-box:11500')
  })

  test('surrounding quotes are stripped, as Ollama does (env files often quote values)', () => {
    expect(loadConfig({ OLLAMA_HOST: '"gpu-box:11500"' }).ollamaHost).toBe('http://gpu-box:11500')
    expect(loadConfig({ OLLAMA_HOST: "'gpu-box'" }).ollamaHost).toBe('http://gpu-box:11434')
  })
})

describe('the database directory', () => {
  test('is created when missing (ALTTEXT_DB inside non-existent nested directories)', async () => {
    const nested = join(tmp, 'a', 'b', 'c')
    const dbPath = join(nested, 'alttext.db')
    expect(existsSync(nested)).toBe(false)
    const service = await startTestService({ env: { ALTTEXT_DB: dbPath, ALTTEXT_RATE_LIMITS: 'off' }, dir: tmp })
    try {
      expect(existsSync(dbPath)).toBe(true)
      // And the service works on it.
      const account = await service.api.register()
      expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(200)
    } finally {
      await service.stop()
    }
  })
})
