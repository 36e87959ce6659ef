// Compares offline language identifiers on alt-text-sized texts (samples.ts) in every language the
// prompts name: accuracy per language on whole sentences and on shorter cuts, false alarms (a text in
// the asked language called another), and time per call; then the service's own rule (language.ts) on
// the same cuts: false alarms, and wrong-language answers caught. The libraries are not dependencies of the
// service: install them in a scratch directory and run this from there, e.g.
//   mkdir /tmp/langcmp && cd /tmp/langcmp && bun add franc franc-min eld tinyld lande languagedetect
//   bun /path/to/scripts/language/compare.ts
import { notInLanguage } from '../../src/modules/alt-text/language'
import { cut, LANGUAGE_SAMPLES, QUOTING_SAMPLES } from './samples'

const LANGUAGES = Object.keys(LANGUAGE_SAMPLES)

/** ISO 639-3 (franc, lande) to 639-1 for the languages sampled and their usual confusions. */
const ISO3: Record<string, string> = {
  eng: 'en',
  deu: 'de',
  fra: 'fr',
  spa: 'es',
  ita: 'it',
  por: 'pt',
  nld: 'nl',
  swe: 'sv',
  dan: 'da',
  nob: 'nb',
  nno: 'nn',
  fin: 'fi',
  pol: 'pl',
  ces: 'cs',
  slk: 'sk',
  tur: 'tr',
  rus: 'ru',
  ukr: 'uk',
  bel: 'be',
  bul: 'bg',
  arb: 'ar',
  ara: 'ar',
  hin: 'hi',
  mar: 'mr',
  nep: 'ne',
  jpn: 'ja',
  cmn: 'zh',
  zho: 'zh',
  kor: 'ko',
  glg: 'gl',
  cat: 'ca',
  afr: 'af',
  ron: 'ro',
}
const toIso1 = (code: string) => ISO3[code] ?? code

/** A detector restricted to the sampled languages (as the service would use it): the 639-1 code it names, or '' for none. */
type Detector = { name: string; detect: (text: string) => string }

const load = async (name: string) => import(Bun.resolveSync(name, process.cwd()))

async function detectors(): Promise<Detector[]> {
  const found: Detector[] = []
  const attempt = async (label: string, make: () => Promise<Detector['detect']>) => {
    try {
      found.push({ name: label, detect: await make() })
    } catch (error) {
      console.error(`skipped ${label}: ${error instanceof Error ? error.message : error}`)
    }
  }
  const only3 = Object.entries(ISO3)
    .filter(([, v]) => LANGUAGES.includes(v))
    .map(([k]) => k)
  for (const pkg of ['franc-min', 'franc', 'franc-all']) {
    await attempt(pkg, async () => {
      const { franc } = await load(pkg)
      return (text) => toIso1(franc(text, { only: only3, minLength: 1 }))
    })
  }
  for (const size of ['extrasmall', 'small', 'medium']) {
    await attempt(`eld/${size}`, async () => {
      const { eld } = await load(`eld/${size}`)
      eld.setLanguageSubset(LANGUAGES.map((l) => (l === 'nb' ? 'no' : l)))
      return (text) => {
        const language: string = eld.detect(text).language
        return language === 'no' ? 'nb' : language
      }
    })
  }
  for (const flavour of ['light', '']) {
    await attempt(`tinyld${flavour ? `/${flavour}` : ''}`, async () => {
      const { detect } = await load(flavour ? `tinyld/${flavour}` : 'tinyld')
      const only = LANGUAGES.map((l) => (l === 'nb' ? 'no' : l))
      return (text) => {
        const language: string = detect(text, { only })
        return language === 'no' ? 'nb' : language
      }
    })
  }
  await attempt('lande', async () => {
    const lande = (await load('lande')).default
    return (text) => {
      const best = (lande(text) as [string, number][]).map(([code, p]) => [toIso1(code), p] as const).find(([code]) => LANGUAGES.includes(code))
      return best?.[0] ?? ''
    }
  })
  await attempt('languagedetect', async () => {
    const LanguageDetect = (await load('languagedetect')).default
    const detector = new LanguageDetect()
    detector.setLanguageType('iso2')
    return (text) => {
      const best = (detector.detect(text) as [string, number][]).find(([code]) => LANGUAGES.includes(code === 'no' ? 'nb' : code))
      return best ? (best[0] === 'no' ? 'nb' : best[0]) : ''
    }
  })
  return found
}

const CUTS = [12, 20, 30, 40, 45, Number.POSITIVE_INFINITY]
const percent = (hits: number, total: number) => `${Math.round((100 * hits) / total)}%`.padStart(5)

for (const detector of await detectors()) {
  console.log(`\n## ${detector.name}`)
  const header = ['lang', ...CUTS.map((c) => (Number.isFinite(c) ? `≤${c}` : 'full'))]
  console.log(header.map((h) => h.padStart(5)).join(' '))
  const totals = CUTS.map(() => 0)
  let count = 0
  for (const language of LANGUAGES) {
    const row = CUTS.map((chars, i) => {
      const hits = LANGUAGE_SAMPLES[language]!.filter((text) => detector.detect(cut(text, chars)) === language).length
      totals[i] = (totals[i] ?? 0) + hits
      return percent(hits, LANGUAGE_SAMPLES[language]!.length)
    })
    count += LANGUAGE_SAMPLES[language]!.length
    console.log([language.padStart(5), ...row].join(' '))
  }
  console.log(['all'.padStart(5), ...totals.map((t) => percent(t, count))].join(' '))
  const wrong = LANGUAGES.flatMap((l) => LANGUAGE_SAMPLES[l]!.map((t) => [l, t, detector.detect(t)]).filter(([lang, , got]) => got !== lang))
  for (const [language, text, got] of wrong) console.log(`  miss ${language}→${got || '-'}: ${text}`)
  const quoting = QUOTING_SAMPLES.filter(([language, text]) => detector.detect(text) === language).length
  console.log(`quoting samples right: ${quoting}/${QUOTING_SAMPLES.length}`)
  const all = LANGUAGES.flatMap((l) => LANGUAGE_SAMPLES[l]!)
  const started = performance.now()
  const rounds = 20
  for (let r = 0; r < rounds; r++) for (const text of all) detector.detect(text)
  console.log(`time: ${(((performance.now() - started) * 1000) / (rounds * all.length)).toFixed(1)} µs per text`)
}

console.log("\n## the service's rule (notInLanguage: ELD small, score margin, minimum length)")
for (const chars of CUTS) {
  let alarms = 0
  let caught = 0
  let cross = 0
  for (const language of LANGUAGES) {
    for (const text of LANGUAGE_SAMPLES[language]!.map((sample) => cut(sample, chars))) {
      if (notInLanguage(text, language)) alarms++
      for (const other of LANGUAGES.filter((l) => l !== language)) {
        cross++
        if (notInLanguage(text, other)) caught++
      }
    }
  }
  const count = LANGUAGES.reduce((sum, l) => sum + LANGUAGE_SAMPLES[l]!.length, 0)
  console.log(
    `${Number.isFinite(chars) ? `≤${chars}` : 'full'}: false alarms ${alarms}/${count}, other language caught ${((100 * caught) / cross).toFixed(1)}%`,
  )
}
