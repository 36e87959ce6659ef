// `bun scripts/bench/profile.ts [usage|validate|alt-text|hit|burst|all] [seconds] [jpeg|png|webp|gif]`: runs the service
// from source under Bun's sampling profiler (`bun --cpu-prof --cpu-prof-md src/main.ts serve`) while
// wrk drives one kind of load (burst: scenario 5's 50 requests for a 9 MB image at once), then stops it with SIGTERM so the profile is written. The .cpuprofile
// (open it in Chrome DevTools → Performance, or speedscope) and its Markdown summary land in
// scripts/bench/results/profile-<kind>-<time>/. Loopback only, bounded in time, cleans up after itself.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { register } from './lib/common'
import { makeBenchImages } from './lib/images'
import { cleanupAll, installCleanup, registerTempDir, runForResult, spawnReady, startService } from './lib/procs'
import { ensureWrk, runWrk } from './lib/wrk'

const REPO = join(import.meta.dir, '..', '..')
const BUN = process.execPath
const FIXTURES = join(import.meta.dir, 'fixtures.ts')
const kind = process.argv[2] ?? 'all'
const seconds = Math.min(60, Math.max(1, Number(process.argv[3] ?? 5) || 5))
const format = process.argv[4] ?? 'jpeg'
// Sampling interval: 1 ms (Bun's default) sees too few samples of a 20 µs request.
const PROFILE_INTERVAL_US = 100
if (!['usage', 'validate', 'alt-text', 'hit', 'burst', 'all'].includes(kind)) {
  console.error('usage: bun scripts/bench/profile.ts [usage|validate|alt-text|hit|burst|all] [seconds] [jpeg|png|webp|gif]')
  process.exit(2)
}

installCleanup()
try {
  const wrk = await ensureWrk()
  const dir = registerTempDir(mkdtempSync(join(tmpdir(), 'alttext-profile-')))
  const outDir = join(import.meta.dir, 'results', `profile-${kind}-${new Date().toISOString().replace(/[:.]/g, '-')}`)
  mkdirSync(outDir, { recursive: true })
  const images = makeBenchImages(join(dir, 'images'))
  const [imageServer, ollama] = await Promise.all([
    spawnReady('image server', [BUN, FIXTURES, 'image-server', join(dir, 'images')]),
    spawnReady('fake ollama', [BUN, FIXTURES, 'ollama', '0']),
  ])
  // A wrapper script, because startService runs `<binary> serve`.
  const wrapper = join(dir, 'alttext-profiled')
  await Bun.write(
    wrapper,
    `#!/bin/sh\nexec ${BUN} --cpu-prof --cpu-prof-md --cpu-prof-interval=${PROFILE_INTERVAL_US} --cpu-prof-dir=${outDir} ${join(REPO, 'src', 'main.ts')} "$@"\n`,
  )
  await Bun.spawn(['chmod', '+x', wrapper]).exited
  const service = await startService(
    wrapper,
    {
      ALTTEXT_DB: join(dir, 'alttext.db'),
      OLLAMA_HOST: String(ollama.info.url),
      ALTTEXT_RATE_LIMITS: 'off',
      ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
      NODE_EXTRA_CA_CERTS: String(imageServer.info.caPath),
      // The side the bench's floors prepare images at (1024 px), whatever the model's own.
      ALTTEXT_IMAGE_MAX_SIDE: '1024',
      ALTTEXT_FREE_CREDITS: '10000000',
    },
    join(dir, 'service.log'),
  )
  const { apiKey } = await register(service.url, 'profile@example.com')
  const image = images.intake.find((candidate) => candidate.format === format)
  if (!image) throw new Error(`no bench image of format ${format}`)
  const imageUrl = String(imageServer.info.origin) + image.path
  const runs: Array<[string, Parameters<typeof runWrk>[1]]> = [
    ['usage', { url: `${service.url}/api/usage`, script: 'static.lua', connections: 64, durationS: seconds, env: { BENCH_KEY: apiKey } }],
    [
      'validate',
      {
        url: `${service.url}/api/validate-key`,
        script: 'static.lua',
        connections: 64,
        durationS: seconds,
        env: { BENCH_METHOD: 'POST', BENCH_BODY: JSON.stringify({ api_key: apiKey }) },
      },
    ],
    [
      'alt-text',
      {
        url: `${service.url}/api/alt-text`,
        script: 'alt-text.lua',
        connections: 1,
        durationS: seconds,
        env: { BENCH_KEY: apiKey, BENCH_IMAGE_URL: imageUrl, BENCH_PREFIX: 'p' },
      },
    ],
    [
      'hit',
      {
        url: `${service.url}/api/alt-text`,
        script: 'alt-text.lua',
        connections: 16,
        durationS: seconds,
        env: { BENCH_KEY: apiKey, BENCH_IMAGE_URL: imageUrl, BENCH_PREFIX: 'p', BENCH_CYCLE: '3' },
      },
    ],
  ]
  for (const [name, options] of runs) {
    if (kind !== 'all' && kind !== name && !(kind === 'hit' && name === 'alt-text')) continue
    const result = await runWrk(wrk, options)
    console.error(`${name}: ${Math.round(result.rps)}/s, p50 ${(result.p50 / 1000).toFixed(2)} ms, p99 ${(result.p99 / 1000).toFixed(2)} ms`)
  }
  if (kind === 'burst' || kind === 'all') {
    const result = await runForResult<{ answers: { status: number }[]; burstMs: number }>('burst', [BUN, join(import.meta.dir, 'burst.ts')], {
      BENCH_BURST: JSON.stringify({
        url: service.url,
        key: apiKey,
        imageUrl: String(imageServer.info.origin) + images.large.path,
        count: 50,
        prefix: 'profile',
        probe: true,
      }),
    })
    console.error(
      `burst: ${result.answers.filter((a) => a.status === 200).length} × 200 of ${result.answers.length} in ${(result.burstMs / 1000).toFixed(1)} s`,
    )
  }
  await service.stop() // SIGTERM: Bun writes the profile on exit
  console.log(`profile: ${outDir}`)
  for (const file of readdirSync(outDir)) {
    console.log(`  ${file}`)
    if (file.endsWith('.md')) console.log(readFileSync(join(outDir, file), 'utf8').split('\n').slice(0, 60).join('\n'))
  }
} catch (error) {
  console.error(`profile failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  process.exitCode = 1
} finally {
  await cleanupAll()
}
