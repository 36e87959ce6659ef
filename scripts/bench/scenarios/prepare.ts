// Scenario 18 (prepare): the service's image preparation (decode, downscale to 1024 px, encode) against
// the native codecs, and against the code before sharp ("before": the commit before src/intake/codec.ts
// was added, built from git into a second binary), in the same rounds on the same files.
//  - Prepare p50 (the service's Server-Timing `prepare` stage, one connection, cache misses, a model that
//    answers at once), each sample paired with a floor sample: for JPEG `djpeg -scale 1/N | cjpeg
//    -quality 85` (the largest DCT scale covering 1024 px), for WebP `dwebp -scale W H | cjpeg`, both
//    with process start and pipes; for PNG a zlib inflate and unfilter in a bare script; for GIF
//    `giftopnm` (the first frame, decoded alone). Targets: JPEG 3000×2000 and 4000×3000 and WebP
//    2000×1500 ≤ 1.5× their floor; PNG and GIF ≥ 2× faster than before (GIF: the 800×600 one of
//    scenario 2, which is not resized, and one of 2000×1500, which is).
//  - End-to-end cache-miss p50, before → after; generations per second the 2 cores prepare (JPEG
//    3000×2000, 8 cache misses at a time through wrk, the model instant), before → after.
//  - SSIM of what the model received against Lanczos3 from the full-resolution decode, before and after.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { type Account, anomalies, BENCH_DIR, BUN, type Fixtures, inRoundOrder, log, loopback, QUICK, REPO, ROUNDS, register, serviceEnv } from '../lib/common'
import { ensureCommands } from '../lib/debian'
import { runForResult, type ServiceHandle, spawnReady, startService, stopChild } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, median, ratioFigure } from '../lib/stats'
import { runWrk } from '../lib/wrk'
import type { LatencyResult, PrepareImage, PrepareService, QualityResult } from '../prepare-client'

const CLIENT = join(BENCH_DIR, 'prepare-client.ts')
const FIXTURES = join(BENCH_DIR, 'fixtures.ts')
const MAX_SIDE = 1024
/** SSIM may differ by this much between two good resampling filters; the reference is the old code's own filter. */
const SSIM_TOLERANCE = 0.001
const TARGETS = { floorRatio: 1.5, speedUp: 2, ssimTolerance: SSIM_TOLERANCE }
export const PREPARE = {
  iterations: QUICK ? 3 : 8,
  throughput: { connections: 8, seconds: QUICK ? 2 : 5 },
  maxSide: MAX_SIDE,
  targets: TARGETS,
}
/** Room for the throughput run: 8 images of one account at once, and the model never the bottleneck. */
const SERVICE_EXTRA = { ALTTEXT_MAX_IMAGES_PER_ACCOUNT: '8', ALTTEXT_MODEL_CONCURRENCY: '8', ALTTEXT_IMAGE_MAX_SIDE: String(MAX_SIDE) }
const TOOLS = { djpeg: 'libjpeg-turbo-progs', cjpeg: 'libjpeg-turbo-progs', dwebp: 'webp', giftopnm: 'netpbm' }

export type PrepareRound = { latency: LatencyResult; throughput: Record<string, { rps: number; bad: number }> }
export type PrepareResult = { before: string; images: PrepareImage[]; rounds: PrepareRound[]; quality: QualityResult }

/** The commit before the codec change, built into a binary with today's node_modules (its dependencies are a subset). */
async function buildBefore(fx: Fixtures): Promise<{ binary: string; commit: string }> {
  const given = process.env.BENCH_BEFORE_BINARY
  if (given) return { binary: given, commit: 'BENCH_BEFORE_BINARY' }
  const git = (...args: string[]) => execFileSync('git', ['-C', REPO, ...args], { encoding: 'utf8' }).trim()
  const added = git('log', '--format=%H', '--diff-filter=A', '-1', '--', 'src/intake/codec.ts')
  if (!added) throw new Error('no commit adds src/intake/codec.ts: cannot tell which code came before it')
  const commit = git('rev-parse', `${added}^`)
  const dir = mkdtempSync(join(fx.dir, 'before-'))
  execFileSync('sh', ['-c', `git -C "${REPO}" archive ${commit} src package.json tsconfig.json bunfig.toml | tar -x -C "${dir}"`])
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'))
  const build = Bun.spawnSync([BUN, 'run', 'build'], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
  if (build.exitCode !== 0) throw new Error(`building ${commit.slice(0, 10)} failed:\n${build.stderr.toString().slice(-2000)}`)
  return { binary: join(dir, 'dist', 'alttext'), commit }
}

function benchImages(fx: Fixtures): PrepareImage[] {
  const [jpeg, png, webp, gif] = (['jpeg', 'png', 'webp', 'gif'] as const).map((format) => fx.images.intake.find((image) => image.format === format)!)
  const entry = (name: string, image: typeof jpeg): PrepareImage => ({
    name,
    label: image!.label,
    url: loopback(fx.imageOrigin + image!.path),
    file: join(fx.dir, 'images', image!.path.slice(1)),
    format: image!.format,
    width: image!.width,
    height: image!.height,
  })
  return [
    entry('jpeg', jpeg),
    entry('jpeg-large', fx.images.large),
    entry('webp', webp),
    entry('png', png),
    entry('gif', gif),
    entry('gif-large', fx.images.largeGif),
  ]
}

export async function measurePrepare(fx: Fixtures): Promise<PrepareResult> {
  const tools = await ensureCommands(TOOLS)
  log('scenario 18 (prepare): building the code before the codec change')
  const before = await buildBefore(fx)
  log(`before: ${before.commit.slice(0, 10)}`)
  const keepDir = join(fx.dir, 'prepared')
  mkdirSync(keepDir)
  const ollama = await spawnReady('fake ollama (keeps images)', [BUN, FIXTURES, 'ollama', '0', keepDir])
  const ollamaUrl = loopback(String(ollama.info.url))
  const handles: ServiceHandle[] = []
  try {
    const binaries = { after: fx.binary, before: before.binary }
    const services: PrepareService[] = []
    for (const [label, binary] of Object.entries(binaries)) {
      const handle = await startService(
        binary,
        serviceEnv(fx, join(fx.dir, `prepare-${label}`, 'alttext.db'), ollamaUrl, SERVICE_EXTRA),
        join(fx.logDir, `prepare-${label}.log`),
      )
      handles.push(handle)
      const account: Account = await register(handle.url)
      services.push({ label, url: handle.url, key: account.apiKey })
    }
    const images = benchImages(fx)
    const client = (mode: 'latency' | 'quality', prefix: string, iterations: number) =>
      runForResult<LatencyResult & QualityResult>(`prepare client (${mode})`, [BUN, CLIENT], {
        BENCH_PREPARE: JSON.stringify({ mode, services, images, iterations, prefix, keepDir, maxSide: MAX_SIDE, tools }),
      })
    // Warm every path (first decode, first worker, JIT) before anything is recorded.
    await client('latency', 'warm', 2)
    const rounds: PrepareRound[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const latency = (await client('latency', `r${round}`, PREPARE.iterations)) as LatencyResult
      const throughput: PrepareRound['throughput'] = {}
      for (const service of inRoundOrder(services, round)) {
        const result = await runWrk(fx.wrk, {
          url: loopback(`${service.url}/api/alt-text`),
          script: 'alt-text.lua',
          connections: PREPARE.throughput.connections,
          durationS: PREPARE.throughput.seconds,
          env: { BENCH_KEY: service.key, BENCH_IMAGE_URL: images[0]!.url, BENCH_PREFIX: `throughput-r${round}-${service.label}` },
        })
        throughput[service.label] = { rps: result.misses / (result.duration_us / 1e6), bad: result.bad + result.hits }
        if (result.bad + result.hits > 0)
          anomalies.push(`round ${round + 1}, prepare throughput (${service.label}): ${result.bad} non-200 answers, ${result.hits} hits`)
      }
      for (const image of images) {
        const entry = latency[image.name]!
        for (const service of services) {
          const bad = entry.answers[service.label]!.filter((a) => a.status !== 200 || a.cached !== false).length
          if (bad > 0) anomalies.push(`round ${round + 1}, prepare ${image.label} (${service.label}): ${bad} answers not a 200 cache miss`)
        }
      }
      log(
        `round ${round + 1}: ${images
          .map((image) => {
            const entry = latency[image.name]!
            const p50 = (label: string) => median(entry.answers[label]!.map((a) => a.prepareMs)).toFixed(0)
            return `${image.label} floor ${median(entry.floorMs).toFixed(0)} / after ${p50('after')} / before ${p50('before')} ms`
          })
          .join('; ')}; generations/s after ${throughput.after!.rps.toFixed(1)}, before ${throughput.before!.rps.toFixed(1)}`,
      )
      rounds.push({ latency, throughput })
    }
    const quality = (await client('quality', 'quality', 1)) as QualityResult
    return { before: before.commit, images, rounds, quality }
  } finally {
    await Promise.all(handles.map((handle) => handle.stop()))
    await stopChild(ollama.proc)
  }
}

const SCENARIO = '18 prepare'

export function prepareRows(result: PrepareResult): Row[] {
  const rows: Row[] = []
  const perRound = (pick: (round: PrepareRound) => number[]) => result.rounds.map((round) => median(pick(round)))
  for (const image of result.images) {
    const floor = perRound((r) => r.latency[image.name]!.floorMs)
    const stage = (label: string) => perRound((r) => r.latency[image.name]!.answers[label]!.map((a) => a.prepareMs))
    const endToEnd = (label: string) => perRound((r) => r.latency[image.name]!.answers[label]!.map((a) => a.ms))
    const after = stage('after')
    const before = stage('before')
    const floorLabel = image.format === 'jpeg' || image.format === 'webp' ? 'native tools' : image.format === 'png' ? 'zlib decode' : 'giftopnm'
    const floorTarget = image.format === 'jpeg' || image.format === 'webp'
    const floorRatio = ratioFigure(after, floor)
    rows.push({
      scenario: SCENARIO,
      figure: `${image.label}: prepare p50 vs the native floor`,
      unit: 'ms',
      value: figure(after),
      baseline: { label: floorLabel, value: figure(floor) },
      ratio: { kind: 'x', value: floorRatio },
      target: floorTarget ? `≤ ${TARGETS.floorRatio}× floor` : undefined,
      met: floorTarget ? floorRatio.median <= TARGETS.floorRatio : null,
    })
    const speedUp = ratioFigure(before, after)
    const speedTarget = image.format === 'png' || image.format === 'gif'
    rows.push({
      scenario: SCENARIO,
      figure: `${image.label}: prepare p50 before the codec change, and how many times faster now`,
      unit: 'ms',
      value: figure(before),
      baseline: { label: 'now', value: figure(after) },
      ratio: { kind: 'x', value: speedUp },
      target: speedTarget ? `≥ ${TARGETS.speedUp}× faster` : undefined,
      met: speedTarget ? speedUp.median >= TARGETS.speedUp : null,
    })
    rows.push({
      scenario: SCENARIO,
      figure: `${image.label}: end-to-end cache miss p50 (instant model), now vs before`,
      unit: 'ms',
      value: figure(endToEnd('after')),
      baseline: { label: 'before', value: figure(endToEnd('before')) },
      ratio: { kind: 'x', value: ratioFigure(endToEnd('after'), endToEnd('before')) },
      met: null,
    })
    const quality = result.quality[image.name] ?? {}
    const score = (label: string) => {
      const entry = quality[label]
      return entry && 'ssim' in entry ? entry.ssim : Number.NaN
    }
    rows.push({
      scenario: SCENARIO,
      figure: `${image.label}: SSIM of what the model receives vs Lanczos3 from full resolution, now vs before`,
      unit: 'ssim',
      value: figure([score('after')]),
      baseline: { label: 'before', value: score('before') },
      target: `≥ before − ${SSIM_TOLERANCE}`,
      met: score('after') >= score('before') - SSIM_TOLERANCE,
    })
  }
  const rps = (label: string) => result.rounds.map((round) => round.throughput[label]!.rps)
  rows.push({
    scenario: SCENARIO,
    figure: `generations/s the 2 cores prepare (${result.images[0]!.label}, ${PREPARE.throughput.connections} cache misses at once, instant model), now vs before`,
    unit: 'per-s',
    value: figure(rps('after')),
    baseline: { label: 'before', value: figure(rps('before')) },
    ratio: { kind: 'x', value: ratioFigure(rps('after'), rps('before')) },
    met: null,
  })
  return rows
}
