// Scenario 22: the OCR built into the binary, over the generated OCR corpus (scripts/ocr/corpus.ts: 28
// images with text, 8 without, 1024 px on the long side), read by `alttext ocr --json` from the compiled
// binary, one image after another as the service reads them. Figures: ms per image (p50, p99; the first
// read, which loads ONNX Runtime and the models, apart), the process's peak RSS with the OCR loaded
// (VmHWM), and, as information, the corpus's character error rate and the text invented on text-free
// images (docs/ocr.md has the same from source: `bun scripts/ocr/measure.ts`).
//
// Then OCR's share of a cache miss: the compiled service twice, at once, one with the OCR on (the
// default), one with ALTTEXT_OCR=off, each with its own database, against the fake Ollama that answers
// after QUEUE.modelMs (1 s, as scenario 21). One client uploads (multipart, as an outside client would)
// the same unique text-bearing 1024-px images (the corpus's texts under other seeds) to each, one request
// at a time, so every request is a miss; the modes take turns by round. Figures per mode: the wall time
// p50/p99 and the `ocr` stage of Server-Timing; the share (p50 on − p50 off) / p50 on, and the ocr stage's
// p50 over the on-mode's wall time p50, each per round.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type CorpusImage, characterErrorRate, generateCorpus } from '../../ocr/corpus'
import { anomalies, type Fixtures, inRoundOrder, log, loopback, MiB, QUICK, ROUNDS, register, serviceEnv } from '../lib/common'
import { memoryOf, type ServiceHandle, spawnChild, startService } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, percentile } from '../lib/stats'
import { QUEUE } from './queue'

export const OCR = {
  p50Ms: 400,
  /** Cache misses per mode and round (each a new image), and the unmeasured ones first (loads the OCR, learns the model's time). */
  missRequests: QUICK ? 3 : 6,
  missWarmUp: 2,
  modelMs: QUEUE.modelMs,
}

type Mode = 'on' | 'off'
/** One cache miss as the client saw it: wall time, and the stages of Server-Timing (ms). */
export type MissSample = { ms: number; stages: Record<string, number>; status: number; cached: boolean }
export type MissRound = Record<Mode, MissSample[]>

export type OcrRound = {
  firstMs: number
  ms: number[]
  peakRssBytes: number
  meanCer: number
  invented: number
  exitCode: number
  miss?: MissRound
}

type Line = { file: string; ms: number; read: { text: string } | null; error?: string }

export async function measureOcr(fx: Fixtures): Promise<OcrRound[]> {
  const corpus = await generateCorpus()
  const dir = join(fx.dir, 'ocr-corpus')
  mkdirSync(dir, { recursive: true })
  for (const image of corpus) writeFileSync(join(dir, `${image.name}.png`), image.png)
  log(`scenario 22 (ocr): ${corpus.length} images (${corpus.filter((i) => !i.truth).length} text-free) read by \`alttext ocr\`, ${ROUNDS} rounds`)
  const rounds: OcrRound[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const output = join(fx.logDir, `ocr-${round}.jsonl`)
    const proc = spawnChild('alttext ocr', [fx.binary, 'ocr', '--json', ...corpus.map((image) => join(dir, `${image.name}.png`))], {}, output)
    let peak = 0
    const sampler = setInterval(() => {
      try {
        // A process that has exited but not been reaped reports no VmHWM (NaN).
        const { hwm } = memoryOf(proc.pid)
        if (Number.isFinite(hwm)) peak = Math.max(peak, hwm)
      } catch {
        // gone between the check and the read
      }
    }, 50)
    const exitCode = await proc.exited
    clearInterval(sampler)
    const lines = readFileSync(output, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Line)
    if (exitCode !== 0 || lines.length !== corpus.length)
      anomalies.push(`ocr round ${round + 1}: exit ${exitCode}, ${lines.length} of ${corpus.length} answers`)
    const rates: number[] = []
    let invented = 0
    for (const [i, image] of corpus.entries()) {
      const text = lines[i]?.read?.text ?? ''
      if (image.truth) rates.push(characterErrorRate(image.truth, text))
      else if (lines[i]?.read) invented++
    }
    const [first, ...rest] = lines.map((line) => line.ms)
    const meanCer = rates.reduce((sum, rate) => sum + rate, 0) / rates.length
    rounds.push({ firstMs: first ?? Number.NaN, ms: rest, peakRssBytes: peak, meanCer, invented, exitCode })
    log(
      `ocr round ${round + 1}: p50 ${percentile(rest, 50).toFixed(0)} ms, p99 ${percentile(rest, 99).toFixed(0)} ms, first ${first} ms, peak RSS ${(peak / MiB).toFixed(0)} MiB, CER ${meanCer.toFixed(3)}, invented ${invented}`,
    )
  }
  const misses = await measureMisses(fx)
  for (const [i, round] of rounds.entries()) round.miss = misses[i]
  if (QUICK) anomalies.push('ocr: quick run, one round')
  return rounds
}

/** `ocr;dur=412.30, model;dur=1001.20` → { ocr: 412.3, model: 1001.2 }. */
export function parseServerTiming(header: string | null): Record<string, number> {
  const stages: Record<string, number> = {}
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().split(';')
    const dur = params.map((p) => p.trim()).find((p) => p.startsWith('dur='))
    if (name && dur) stages[name] = Number(dur.slice(4))
  }
  return stages
}

async function upload(service: ServiceHandle, apiKey: string, image: CorpusImage): Promise<MissSample> {
  const form = new FormData()
  form.append('image', new Blob([image.png], { type: 'image/png' }), `${image.name}.png`)
  const started = performance.now()
  const response = await fetch(loopback(`${service.url}/api/alt-text`), {
    method: 'POST',
    headers: { 'x-api-key': apiKey },
    body: form,
    signal: AbortSignal.timeout(30_000),
  })
  const body = (await response.json()) as { cached?: boolean }
  const ms = performance.now() - started
  return { ms, stages: parseServerTiming(response.headers.get('server-timing')), status: response.status, cached: body.cached === true }
}

/** Text-bearing images, all different: the corpus's texts over the backgrounds of other seeds. */
async function uniqueImages(count: number): Promise<CorpusImage[]> {
  const images: CorpusImage[] = []
  for (let seed = 2201; images.length < count; seed++) {
    for (const image of await generateCorpus({ seed, textFree: 0 })) images.push({ ...image, name: `${seed}-${image.name}` })
  }
  return images.slice(0, count)
}

async function measureMisses(fx: Fixtures): Promise<MissRound[]> {
  const perRound = OCR.missRequests
  const images = await uniqueImages(OCR.missWarmUp + ROUNDS * perRound)
  log(
    `scenario 22 (ocr): cache misses with ALTTEXT_OCR on and off, model ${OCR.modelMs} ms, ${perRound} unique 1024-px images with text per mode and round, uploaded one at a time, ${ROUNDS} rounds`,
  )
  const services: Partial<Record<Mode, ServiceHandle>> = {}
  try {
    const modes: Mode[] = ['on', 'off']
    const keys: Partial<Record<Mode, string>> = {}
    for (const mode of modes) {
      const dbDir = join(fx.dir, `db-ocr-${mode}`)
      mkdirSync(dbDir, { recursive: true })
      const extra: Record<string, string> = mode === 'off' ? { ALTTEXT_OCR: 'off' } : {}
      const service = await startService(fx.binary, serviceEnv(fx, join(dbDir, 'alttext.db'), fx.ollamaSlow, extra), join(fx.logDir, `ocr-miss-${mode}.log`))
      services[mode] = service
      keys[mode] = (await register(service.url, `bench-ocr-${mode}@example.com`)).apiKey
      for (const image of images.slice(0, OCR.missWarmUp)) await upload(service, keys[mode]!, image)
    }
    const rounds: MissRound[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const batch = images.slice(OCR.missWarmUp + round * perRound, OCR.missWarmUp + (round + 1) * perRound)
      const result: MissRound = { on: [], off: [] }
      for (const mode of inRoundOrder(modes, round)) {
        for (const image of batch) result[mode].push(await upload(services[mode]!, keys[mode]!, image))
      }
      for (const mode of modes) {
        const bad = result[mode].filter((s) => s.status !== 200 || s.cached || (mode === 'on') !== 'ocr' in s.stages)
        if (bad.length)
          anomalies.push(
            `ocr misses round ${round + 1}, OCR ${mode}: ${bad.length} answers not a fresh 200 with${mode === 'on' ? '' : 'out'} an ocr stage (${JSON.stringify(bad.map((s) => [s.status, s.cached, Object.keys(s.stages)]))})`,
          )
      }
      const p50 = (mode: Mode) =>
        percentile(
          result[mode].map((s) => s.ms),
          50,
        )
      const ocrP50 = percentile(ocrStage(result.on), 50)
      log(
        `ocr misses round ${round + 1}: on p50 ${p50('on').toFixed(0)} ms (ocr stage p50 ${ocrP50.toFixed(0)} ms), off p50 ${p50('off').toFixed(0)} ms, share ${((p50('on') - p50('off')) / p50('on')).toFixed(3)}`,
      )
      rounds.push(result)
    }
    return rounds
  } finally {
    await Promise.all(Object.values(services).map((service) => service.stop()))
  }
}

const ocrStage = (samples: MissSample[]) => samples.map((s) => s.stages.ocr).filter((ms): ms is number => ms !== undefined)

export function ocrRows(rounds: OcrRound[]): Row[] {
  const scenario = '22 ocr'
  const p50 = figure(rounds.map((r) => percentile(r.ms, 50)))
  return [
    { scenario, figure: 'ms per 1024-px image, p50', unit: 'ms', value: p50, target: `≤ ${OCR.p50Ms} ms`, met: p50.median <= OCR.p50Ms },
    { scenario, figure: 'ms per 1024-px image, p99', unit: 'ms', value: figure(rounds.map((r) => percentile(r.ms, 99))), met: null },
    { scenario, figure: 'first read (loads ONNX Runtime and the models)', unit: 'ms', value: figure(rounds.map((r) => r.firstMs)), met: null },
    {
      scenario,
      figure: 'peak RSS of `alttext ocr` with the OCR loaded (VmHWM)',
      unit: 'MiB',
      value: figure(rounds.map((r) => r.peakRssBytes / MiB)),
      met: null,
    },
    {
      scenario,
      figure: 'character error rate, mean per image with text',
      unit: 'rate',
      value: figure(rounds.map((r) => r.meanCer)),
      target: '≤ 0.05',
      met: rounds.every((r) => r.meanCer <= 0.05),
    },
    {
      scenario,
      figure: 'text-free images with text invented',
      unit: 'count',
      value: figure(rounds.map((r) => r.invented)),
      target: '0',
      met: rounds.every((r) => r.invented === 0 && r.exitCode === 0),
    },
    ...missRows(rounds.flatMap((r) => (r.miss ? [r.miss] : []))),
  ]
}

function missRows(rounds: MissRound[]): Row[] {
  if (rounds.length === 0) return []
  const scenario = '22 ocr'
  const label = `cache miss (upload, 1024 px with text, model ${OCR.modelMs} ms)`
  const wall = (mode: Mode, q: number) =>
    rounds.map((r) =>
      percentile(
        r[mode].map((s) => s.ms),
        q,
      ),
    )
  const stage = (q: number) => rounds.map((r) => percentile(ocrStage(r.on), q))
  const onP50 = wall('on', 50)
  const offP50 = wall('off', 50)
  const ocrP50 = stage(50)
  const wrong = rounds.map(
    (r) =>
      r.on.filter((s) => s.status !== 200 || s.cached || !('ocr' in s.stages)).length +
      r.off.filter((s) => s.status !== 200 || s.cached || 'ocr' in s.stages).length,
  )
  return [
    { scenario, figure: `${label}, OCR on: wall time p50`, unit: 'ms', value: figure(onP50), met: null },
    { scenario, figure: `${label}, OCR on: wall time p99`, unit: 'ms', value: figure(wall('on', 99)), met: null },
    { scenario, figure: `${label}, ALTTEXT_OCR=off: wall time p50`, unit: 'ms', value: figure(offP50), met: null },
    { scenario, figure: `${label}, ALTTEXT_OCR=off: wall time p99`, unit: 'ms', value: figure(wall('off', 99)), met: null },
    { scenario, figure: `${label}, OCR on: \`ocr\` stage of Server-Timing, p50`, unit: 'ms', value: figure(ocrP50), met: null },
    { scenario, figure: `${label}, OCR on: \`ocr\` stage of Server-Timing, p99`, unit: 'ms', value: figure(stage(99)), met: null },
    {
      scenario,
      figure: `${label}: OCR's share, (p50 on − p50 off) / p50 on`,
      unit: 'rate',
      value: figure(onP50.map((on, i) => (on - offP50[i]!) / on)),
      met: null,
    },
    {
      scenario,
      figure: `${label}: \`ocr\` stage p50 / wall time p50, OCR on`,
      unit: 'rate',
      value: figure(ocrP50.map((ocr, i) => ocr / onP50[i]!)),
      met: null,
    },
    {
      scenario,
      figure: `${label}: answers not a fresh 200, or an \`ocr\` stage missing (on) or present (off)`,
      unit: 'count',
      value: figure(wrong),
      target: '0',
      met: wrong.every((n) => n === 0),
    },
  ]
}
