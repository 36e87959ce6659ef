// Measures the service's OCR reader (src/ocr) on the generated corpus (corpus.ts): the character error
// rate per image with text (mean, and over all characters), text invented on the text-free images, and
// the time per image (p50, p99), one image at a time as the service reads them. Results: docs/ocr.md.
//
//   bun scripts/ocr/measure.ts [--verbose]
import { createTextReader } from '../../src/ocr/index.ts'
import { characterErrorRate, generateCorpus, normaliseText } from './corpus.ts'

const verbose = process.argv.includes('--verbose')
const corpus = await generateCorpus()
const reader = createTextReader()
const signal = new AbortController().signal
// The first read loads the runtime and the models: timed apart, as the service's first image is.
const warm = performance.now()
await reader.read(corpus[0]!.png, signal)
const loadMs = performance.now() - warm

const times: number[] = []
const rates: number[] = []
let edits = 0
let characters = 0
let invented = 0
for (const image of corpus) {
  const started = performance.now()
  const read = await reader.read(image.png, signal)
  const ms = performance.now() - started
  times.push(ms)
  const text = read?.text ?? ''
  if (image.truth) {
    const rate = characterErrorRate(image.truth, text)
    rates.push(rate)
    edits += rate * normaliseText(image.truth).length
    characters += normaliseText(image.truth).length
  } else if (read) invented++
  if (verbose)
    console.log(
      `${image.name}\t${Math.round(ms)} ms\t${image.truth ? characterErrorRate(image.truth, text).toFixed(3) : read ? 'INVENTED' : 'none'}\t${JSON.stringify(text)}`,
    )
}
await reader.close()

const sorted = times.toSorted((a, b) => a - b)
const percentile = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
const mean = rates.reduce((sum, rate) => sum + rate, 0) / rates.length
console.log(`images: ${rates.length} with text, ${corpus.length - rates.length} text-free`)
console.log(`character error rate: mean ${mean.toFixed(3)} per image, ${(edits / characters).toFixed(3)} over all characters`)
console.log(`invented text on text-free images: ${invented} of ${corpus.length - rates.length}`)
console.log(`ms per image: p50 ${Math.round(percentile(50))}, p99 ${Math.round(percentile(99))} (first read, loading the models: ${Math.round(loadMs)})`)
