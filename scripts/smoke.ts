// Smoke test of the compiled binary: copied alone into an empty directory, started there with a
// temporary database, then /health, a register → usage → revoke round trip, the client and operator
// commands (OCR of an image included), /openapi.json, /metrics and the console.
//
//   bun scripts/smoke.ts [BINARY] [--runner 'COMMAND ARGS']
// BINARY is dist/alttext (`bun run build`'s) when none is named; --runner starts it through another
// program, an emulator for another architecture's build (`qemu-aarch64-static -L /usr/aarch64-linux-gnu`).
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import sharp from 'sharp'
import { startFakeOllama } from '../test/support/fake-ollama'
import { startHttpsImageServer } from '../test/support/https-image-server'
import { makeAnimatedGif, makeJpeg, makePng, makeStillGif, makeWebp } from '../test/support/images'
import { spawnService } from '../test/support/process'

const args = process.argv.slice(2)
const runnerAt = args.indexOf('--runner')
const runner = runnerAt >= 0 ? (args.splice(runnerAt, 2)[1] ?? '').split(' ').filter(Boolean) : []
// --no-ocr: under qemu-user the OCR worker crashes the emulated process (a native library loaded in a
// Worker), so an emulated run checks everything else with the OCR off, and says what it left out.
const noOcrAt = args.indexOf('--no-ocr')
const withOcr = noOcrAt < 0
if (!withOcr) args.splice(noOcrAt, 1)
const binary = args[0] ? resolve(args[0]) : join(import.meta.dir, '..', 'dist', 'alttext')
const dir = mkdtempSync(join(tmpdir(), 'alttext-smoke-'))
const copy = join(dir, 'alttext')
copyFileSync(binary, copy)
/** The command that runs the copy. */
const command = [...runner, copy]
if (readdirSync(dir).length !== 1) throw new Error('smoke directory is not empty')

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(`smoke: ${what}`)
  console.log(`ok - ${what}`)
}

// A fake Ollama and a local HTTPS image host, so the binary's whole pipeline runs (sharp and the libvips
// it embeds, the GIF worker, TLS with an extra CA) without a model.
const ollama = await startFakeOllama({ reply: 'A smoke test image with coloured stripes.' })
const images = await startHttpsImageServer()
const service = await spawnService(
  {
    ALTTEXT_DB: join(dir, 'data', 'smoke.db'),
    OLLAMA_HOST: ollama.url,
    NODE_EXTRA_CA_CERTS: images.caPath,
    ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
    ...(withOcr ? {} : { ALTTEXT_OCR: 'off' }),
  },
  command,
  dir,
  // An emulated binary starts several times slower.
  runner.length > 0 ? 120_000 : undefined,
)
let failed = false
try {
  const version = Bun.spawnSync([...command, '--version'], { cwd: dir, env: { PATH: process.env.PATH ?? '' }, stdout: 'pipe' })
  const versionLine = version.stdout.toString().trim()
  check(
    version.exitCode === 0 && /^alttext \S+ \(commit ([0-9a-f]{12}|unknown), built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$/.test(versionLine),
    `alttext --version → ${versionLine}`,
  )

  const base = service.url
  const json = async (path: string, init?: RequestInit) => {
    const res = await fetch(base + path, init)
    return { status: res.status, body: (await res.json()) as any }
  }
  const health = await json('/health')
  check(health.status === 200 && health.body.status === 'ok', `GET /health → 200 ${JSON.stringify(health.body)}`)

  const email = `smoke-${Date.now()}@example.com`
  const reg = await json('/api/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'smoke test password' }),
  })
  check(reg.status === 201 && /^alt_[0-9a-f]{64}$/.test(reg.body.api_key), 'POST /api/register → 201 with a key')
  const key = reg.body.api_key as string

  const usage = await json('/api/usage', { headers: { 'x-api-key': key } })
  check(usage.status === 200 && usage.body.credits.total === 50 && usage.body.plan === 'free', 'GET /api/usage → 200 with 50 credits')

  // Every accepted format, each larger than the side the model gets, so each is decoded, downscaled and encoded.
  const formats = [
    ['photo.jpg', makeJpeg(1600, 1200), 'jpeg'],
    ['screen.png', makePng(2048, 1536), 'png'],
    ['picture.webp', makeWebp(2000, 1500), 'png'],
    ['still.gif', makeStillGif(1280, 960), 'png'],
  ] as const
  for (const [name, bytes] of formats) {
    const url = images.route(`/${name}`, { kind: 'bytes', body: bytes })
    const alt = await json('/api/alt-text', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ image_url: url }),
    })
    check(
      alt.status === 200 && alt.body.alt_text === 'A smoke test image with coloured stripes.' && alt.body.cached === false,
      `POST /api/alt-text (${name}) → 200 ${JSON.stringify(alt.body.image)}`,
    )
  }
  const sent = ollama.requests.filter((r) => r.path === '/api/chat').map((r) => r.images[0])
  // All 4:3, all larger than the model's side (the model family's, 672 or more): each arrives at that side.
  const side = sent[0]?.width ?? 0
  check(
    sent.length === formats.length &&
      side >= 256 &&
      side < 1280 &&
      formats.every(([, , format], i) => sent[i]?.format === format && sent[i]?.width === side && sent[i]?.height === (side * 3) / 4),
    `the model received each downscaled to the same side: JPEG as JPEG, PNG, WebP and GIF as PNG (${sent.map((image) => `${image?.format} ${image?.width}×${image?.height}`).join(', ')})`,
  )

  // An animation goes to the model as one grid of its key frames (three in a row), said in the answer.
  const animation = await json('/api/alt-text', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ image_url: images.route('/anim.gif', { kind: 'bytes', body: makeAnimatedGif(1280, 960, 3) }) }),
  })
  const grid = ollama.requests.filter((r) => r.path === '/api/chat').at(-1)?.images[0]
  check(
    animation.status === 200 && animation.body.animated === true && (grid?.width ?? 0) > 2 * (grid?.height ?? 0),
    `POST /api/alt-text (anim.gif) → 200, animated, its 3 key frames sent as one grid (${grid?.format} ${grid?.width}×${grid?.height})`,
  )

  // A GIF within the model's side goes out as an indexed PNG made in the GIF worker (zlib inside the binary).
  const smallGif = await json('/api/alt-text', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ image_url: images.route('/small.gif', { kind: 'bytes', body: makeStillGif(160, 120) }) }),
  })
  const smallSent = ollama.requests.filter((r) => r.path === '/api/chat').at(-1)?.images[0]
  check(
    smallGif.status === 200 && smallSent?.format === 'png' && smallSent.width === 160 && smallSent.height === 120,
    `POST /api/alt-text (small.gif) → 200, sent unresized as PNG (${smallSent?.format} ${smallSent?.width}×${smallSent?.height})`,
  )

  // The language check (ELD's n-gram data bundled in the binary): an English answer to a request for
  // German is sent back once, text only, and the German translation is what comes back.
  const german = 'Ein Testbild mit bunten Streifen in einem hellen Rahmen.'
  ollama.behave({ reply: ({ images: sentImages }) => (sentImages.length > 0 ? 'A smoke test image with coloured stripes in a light frame.' : german) })
  const chatsBefore = ollama.chatRequests().length
  const translated = await json('/api/alt-text', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ image_url: images.route('/german.png', { kind: 'bytes', body: makePng(96, 64) }), language: 'de' }),
  })
  const followUp = ollama.requests.filter((r) => r.path === '/api/chat').slice(chatsBefore)
  check(
    translated.status === 200 && translated.body.alt_text === german && followUp.length === 2 && followUp[1]?.images.length === 0,
    'POST /api/alt-text (language de, an English answer) → translated by a second, text-only call',
  )
  ollama.behave({ reply: 'A smoke test image with coloured stripes.' })

  // The client commands run from the same binary: describe one uploaded file, audit a page with --dry-run.
  writeFileSync(join(dir, 'photo.png'), makePng(64, 48))
  writeFileSync(join(dir, 'page.html'), '<p>Hi</p><img src="photo.png">')
  // Spawned, not spawnSync: the fake model answering the command lives in this process's event loop.
  const cli = async (args: string[]) => {
    const run = Bun.spawn([...command, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', ALTTEXT_URL: base, ALTTEXT_API_KEY: key },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [stdout, code] = await Promise.all([new Response(run.stdout).text(), run.exited])
    return { code, stdout }
  }
  const described = await cli(['describe', 'photo.png'])
  check(
    described.code === 0 && JSON.parse(described.stdout.trim()).alt_text === 'A smoke test image with coloured stripes.',
    'alttext describe photo.png → exit 0 with its alt text',
  )
  const audited = await cli(['audit', '--dry-run', '--json', '-', 'page.html'])
  check(audited.code === 0 && JSON.parse(audited.stdout).totals.missing === 1, 'alttext audit --dry-run page.html → exit 0, the image without alt found')

  // The operator commands, from the binary, on the running service's database: its built-in test image goes to the model.
  const operator = async (args: string[]) => {
    const run = Bun.spawn([...command, ...args], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        ALTTEXT_DB: join(dir, 'data', 'smoke.db'),
        OLLAMA_HOST: ollama.url,
        HOST: '127.0.0.1',
        PORT: new URL(base).port,
        ALTTEXT_PUBLIC_URL: base,
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [stdout, code] = await Promise.all([new Response(run.stdout).text(), run.exited])
    return { code, stdout }
  }
  const doctor = await operator(['doctor', '--json'])
  check(
    doctor.code === 0 && JSON.parse(doctor.stdout).checks.some((c: { id: string; status: string }) => c.id === 'test_generation' && c.status === 'pass'),
    'alttext doctor → exit 0, the test generation with the embedded image passes',
  )
  if (withOcr) {
    // The OCR inside the binary (ONNX Runtime's library and the PaddleOCR models embedded, the OCR worker): a sign's two lines.
    const sign = `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="400"><rect width="100%" height="100%" fill="#fff"/><g font-family="DejaVu Sans" font-size="40" fill="#000"><text x="40" y="120">Fire exit</text><text x="40" y="240">Keep clear</text></g></svg>`
    await sharp(Buffer.from(sign)).png().toFile(join(dir, 'sign.png'))
    const ocr = await operator(['ocr', 'sign.png'])
    check(ocr.code === 0 && ocr.stdout === 'Fire exit\nKeep clear\n', `alttext ocr sign.png → exit 0, its two lines read (${JSON.stringify(ocr.stdout)})`)
    // And the service's own reading of the same sign: text_in_image comes from the OCR, not the model.
    ollama.behave({ reply: 'A white sign with black lettering.' })
    const signed = await json('/api/alt-text', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ image_base64: (await Bun.file(join(dir, 'sign.png')).bytes()).toBase64() }),
    })
    check(
      signed.status === 200 && signed.body.text_in_image === 'Fire exit\nKeep clear',
      `POST /api/alt-text (sign.png) → 200, text_in_image read by the OCR (${JSON.stringify(signed.body.text_in_image)})`,
    )
  } else console.log('skip - alttext ocr and text_in_image: --no-ocr (the OCR is not run under emulation)')
  const backup = await operator(['backup', '--json', join(dir, 'smoke-backup.db')])
  check(backup.code === 0 && JSON.parse(backup.stdout).tables.accounts === 1, 'alttext backup → exit 0, a checked copy with the account')

  const revoke = await json('/api/keys/revoke', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ key_prefix: reg.body.prefix }),
  })
  check(revoke.status === 200 && revoke.body.revoked === true, 'POST /api/keys/revoke → 200 revoked')

  const after = await json('/api/usage', { headers: { 'x-api-key': key } })
  check(after.status === 401 && after.body.error.code === 'invalid_api_key', 'revoked key → 401 invalid_api_key')

  const spec = await json('/openapi.json')
  check(
    spec.status === 200 && String(spec.body.openapi).startsWith('3.1') && spec.body.paths['/api/alt-text'],
    'GET /openapi.json → OpenAPI 3.1 with /api/alt-text',
  )

  const metrics = await fetch(`${base}/metrics`)
  const exposition = await metrics.text()
  check(
    metrics.status === 200 &&
      exposition.includes('alttext_accounts 1') &&
      /^alttext_credits_charged_total [1-9]/m.test(exposition) &&
      /^alttext_http_requests_total\{method="POST",route="\/api\/alt-text",status="200"\} [1-9]/m.test(exposition),
    'GET /metrics → the Prometheus exposition (prom-client inside the binary), counting the traffic',
  )

  check(!service.output().includes('worker entrypoints missing'), 'the binary contains the image fetch, GIF decoder and OCR workers')

  const docs = await fetch(`${base}/docs`)
  const reference = await docs.text()
  const docsAssets = await Promise.all(['/docs/assets/docs.css', '/docs/assets/api-reference.js'].map(async (path) => (await fetch(base + path)).status))
  check(
    docs.status === 200 && reference.includes('id="generateAltText"') && docsAssets.every((status) => status === 200),
    'GET /docs → the API reference, rendered from the OpenAPI document, with its stylesheet and script',
  )

  // The console: its page and every asset it names come out of the binary (no network, no files beside it).
  const page = await fetch(`${base}/`)
  const html = await page.text()
  check(
    page.status === 200 && html.includes('id="console"') && (page.headers.get('content-security-policy') ?? '').includes("script-src 'self'"),
    'GET / → the console page with its CSP',
  )
  const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!)
  const loaded = await Promise.all(assets.map(async (path) => (await fetch(base + path)).status))
  check(assets.length >= 2 && loaded.every((status) => status === 200), `the console's assets are embedded in the binary (${assets.join(', ')})`)
} catch (error) {
  failed = true
  console.error(error instanceof Error ? error.message : error)
  console.error(service.output())
} finally {
  service.proc.kill('SIGTERM')
  const code = await service.exited
  if (code !== 0) {
    failed = true
    console.error(`smoke: binary exited with ${code} on SIGTERM`)
  } else console.log('ok - exits 0 on SIGTERM')
  rmSync(dir, { recursive: true, force: true })
  await Promise.all([ollama.stop(), images.stop()])
}
if (failed) process.exit(1)
console.log('smoke test passed')
