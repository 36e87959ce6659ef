// Scenario 22: the OCR built into the binary, over the generated OCR corpus (scripts/ocr/corpus.ts: 28
// images with text, 8 without, 1024 px on the long side), read by `alttext ocr --json` from the compiled
// binary, one image after another as the service reads them. Figures: ms per image (p50, p99; the first
// read, which loads ONNX Runtime and the models, apart), the process's peak RSS with the OCR loaded
// (VmHWM), and, as information, the corpus's character error rate and the text invented on text-free
// images (docs/ocr.md has the same from source: `bun scripts/ocr/measure.ts`).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { characterErrorRate, generateCorpus } from '../../ocr/corpus'
import { anomalies, type Fixtures, log, MiB, QUICK, ROUNDS } from '../lib/common'
import { memoryOf, spawnChild } from '../lib/procs'
import type { Row } from '../lib/report'
import { figure, percentile } from '../lib/stats'

export const OCR = { p50Ms: 400 }

export type OcrRound = { firstMs: number; ms: number[]; peakRssBytes: number; meanCer: number; invented: number; exitCode: number }

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
  if (QUICK) anomalies.push('ocr: quick run, one round')
  return rounds
}

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
  ]
}
