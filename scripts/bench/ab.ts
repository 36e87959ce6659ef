// `bun scripts/bench/ab.ts <binary A> <binary B> [what...]`: compares two builds of the service on the
// same fixtures in the same run, interleaved, to tell whether a change helps before the full
// `bun run bench`. what: jpeg, png, webp, gif (end-to-end p50 of a miss with an instant model, paired
// with the floor), usage, validate (requests/s and CPU µs per request at 64 connections), burst (peak
// RSS and event-loop delay p99 with 50 large images in flight, fresh services). Default: gif usage. Loopback only; children and temporary folders are removed at the end. BENCH_ROUNDS (default 5).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { register } from './lib/common'
import { makeBenchImages } from './lib/images'
import { cleanupAll, cpuMsOf, installCleanup, memoryOf, registerTempDir, runForResult, spawnReady, startService } from './lib/procs'
import { median, percentile } from './lib/stats'
import { ensureWrk, runWrk } from './lib/wrk'
import type { BurstResult } from './burst'
import type { PairedResult } from './paired'

const BUN = process.execPath
const [binaryA, binaryB, ...rest] = process.argv.slice(2)
if (!binaryA || !binaryB) {
  console.error('usage: bun scripts/bench/ab.ts <binary A> <binary B> [jpeg|png|webp|gif|usage|validate ...]')
  process.exit(2)
}
const what = rest.length > 0 ? rest : ['gif', 'usage']
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5) || 5)

installCleanup()
try {
  const wrk = await ensureWrk()
  const dir = registerTempDir(mkdtempSync(join(tmpdir(), 'alttext-ab-')))
  const images = makeBenchImages(join(dir, 'images'))
  const [imageServer, ollama] = await Promise.all([
    spawnReady('image server', [BUN, join(import.meta.dir, 'fixtures.ts'), 'image-server', join(dir, 'images')]),
    spawnReady('fake ollama', [BUN, join(import.meta.dir, 'fixtures.ts'), 'ollama', '0']),
  ])
  const caPath = String(imageServer.info.caPath)
  const serviceEnv = (i: number) => ({
    ALTTEXT_DB: join(dir, `${i}.db`),
    OLLAMA_HOST: String(ollama.info.url),
    ALTTEXT_RATE_LIMITS: 'off',
    ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
    NODE_EXTRA_CA_CERTS: caPath,
    // The floors (lib/floor.ts, upload-floor.ts) prepare images at 1024 px; the model's own side would differ.
    ALTTEXT_IMAGE_MAX_SIDE: '1024',
    ALTTEXT_FREE_CREDITS: '10000000',
  })
  const services = await Promise.all([binaryA, binaryB].map((binary, i) => startService(binary, serviceEnv(i), join(dir, `${i}.log`))))
  const keys: string[] = []
  for (const service of services) keys.push((await register(service.url, 'ab@example.com')).apiKey)
  const lines: string[] = []
  for (const item of what) {
    const image = images.intake.find((candidate) => candidate.format === item)
    if (image) {
      // The paired client sends the same key to both: each service gets its own run per key.
      const samples: number[][] = [[], []]
      const floor: number[] = []
      const floorFetch: number[] = []
      const floorPrepare: number[] = []
      // Per service, each Server-Timing stage's per-round medians.
      const stages: Record<string, number[]>[] = [{}, {}]
      for (let round = 0; round < ROUNDS; round++) {
        for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
          const result = await runForResult<PairedResult>('paired client', [BUN, join(import.meta.dir, 'paired.ts')], {
            BENCH_PAIRED: JSON.stringify({
              mode: 'miss',
              services: [services[i]!.url],
              key: keys[i],
              imageUrl: String(imageServer.info.origin) + image.path,
              caPath,
              format: image.format,
              width: image.width,
              height: image.height,
              prefix: `ab${round}-${i}`,
              seconds: 3,
              min: 8,
              max: 60,
            }),
          })
          const bad = result.answers[0]!.filter((answer) => answer.status !== 200 || answer.cached !== false)
          if (bad.length) console.error(`${image.label}, build ${'AB'[i]}, round ${round + 1}: ${bad.length} answers not a 200 miss (${bad[0]!.status})`)
          samples[i]!.push(median(result.answers[0]!.map((answer) => answer.ms)))
          for (const name of Object.keys(result.answers[0]![0]?.stages ?? {})) {
            stages[i]![name] ??= []
            stages[i]![name].push(median(result.answers[0]!.map((answer) => answer.stages?.[name] ?? Number.NaN)))
          }
          floor.push(median(result.floor.map((sample) => sample.totalMs)))
          floorFetch.push(median(result.floor.map((sample) => sample.fetchMs)))
          floorPrepare.push(median(result.floor.map((sample) => sample.prepareMs)))
        }
      }
      const f = median(floor)
      lines.push(
        `${image.label}: p50 A ${median(samples[0]!).toFixed(2)} ms (${(median(samples[0]!) / f).toFixed(2)}×), B ${median(samples[1]!).toFixed(2)} ms (${(median(samples[1]!) / f).toFixed(2)}×), floor ${f.toFixed(2)} ms (fetch ${median(floorFetch).toFixed(2)} + prepare ${median(floorPrepare).toFixed(2)}); rounds A ${samples[0]!.map((x) => x.toFixed(1)).join(' ')} | B ${samples[1]!.map((x) => x.toFixed(1)).join(' ')}`,
      )
      const stageLine = (i: number) =>
        Object.entries(stages[i]!)
          .map(([name, values]) => `${name} ${median(values).toFixed(2)}`)
          .join(', ')
      lines.push(`  stages p50 A: ${stageLine(0)}\n  stages p50 B: ${stageLine(1)}`)
      continue
    }
    if (item === 'burst') {
      // Scenario 5 on a fresh service per round: peak RSS and event-loop delay under 50 large images.
      const peak: number[][] = [[], []]
      const delay: number[][] = [[], []]
      for (let round = 0; round < ROUNDS; round++) {
        for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
          const fresh = await startService([binaryA, binaryB][i]!, serviceEnv(i), join(dir, `burst-${round}-${i}.log`))
          try {
            const result = await runForResult<BurstResult>('burst', [BUN, join(import.meta.dir, 'burst.ts')], {
              BENCH_BURST: JSON.stringify({
                url: fresh.url,
                key: keys[i],
                imageUrl: String(imageServer.info.origin) + images.large.path,
                count: 50,
                prefix: `burst-${round}`,
                probe: true,
                probeIntervalMs: 10,
                idleProbeMs: 1000,
              }),
            })
            peak[i]!.push(memoryOf(fresh.pid).hwm / 1024 / 1024)
            delay[i]!.push(percentile(result.loadProbeMs, 99) - median(result.idleProbeMs))
          } finally {
            await fresh.stop()
          }
        }
      }
      lines.push(
        `burst: peak RSS A ${median(peak[0]!).toFixed(0)} MiB, B ${median(peak[1]!).toFixed(0)} MiB; event-loop delay p99 A ${median(delay[0]!).toFixed(1)} ms (${delay[0]!.map((x) => x.toFixed(0)).join(' ')}), B ${median(delay[1]!).toFixed(1)} ms (${delay[1]!.map((x) => x.toFixed(0)).join(' ')})`,
      )
      continue
    }
    if (item !== 'usage' && item !== 'validate') throw new Error(`unknown item ${item}`)
    const rps: number[][] = [[], []]
    const cpu: number[][] = [[], []]
    for (let round = 0; round < ROUNDS; round++) {
      for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const service = services[i]!
        const env: Record<string, string> =
          item === 'usage' ? { BENCH_KEY: keys[i]! } : { BENCH_METHOD: 'POST', BENCH_BODY: JSON.stringify({ api_key: keys[i] }) }
        const cpu0 = cpuMsOf(service.pid)
        const result = await runWrk(wrk, {
          url: `${service.url}/api/${item === 'usage' ? 'usage' : 'validate-key'}`,
          script: 'static.lua',
          connections: 64,
          durationS: 2,
          env,
        })
        const errors = result.status + result.connect + result.read + result.write + result.timeout
        if (errors > 0) console.error(`${item}, build ${'AB'[i]}, round ${round + 1}: ${errors} errors (status ≥ 400: ${result.status})`)
        rps[i]!.push(result.rps)
        cpu[i]!.push(((cpuMsOf(service.pid) - cpu0) * 1000) / result.requests)
      }
    }
    lines.push(
      `${item}: A ${Math.round(median(rps[0]!))}/s ${median(cpu[0]!).toFixed(1)} µs CPU; B ${Math.round(median(rps[1]!))}/s ${median(cpu[1]!).toFixed(1)} µs CPU`,
    )
  }
  console.log(lines.join('\n'))
} finally {
  await cleanupAll()
}
