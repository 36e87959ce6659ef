// List items that continue the one before: "- A laptop on a wooden desk\n- A cup of coffee beside it"
// is one alt text whose second line refers back to the first ("beside it"), not two options to pick from.
import { rulesLanguage } from './count'
import { endsWithTerminalPunctuation } from './sentence'
import { BACK_REFERENCES, FUNCTION_WORDS, wordSet } from './words'

type BackReference = { afterPreposition: RegExp; opener: RegExp; adverb: RegExp | null; articles: ReadonlySet<string> }

const NOT_WORD = String.raw`(?![\p{L}\p{M}\p{N}])`
const WORD_BEFORE = String.raw`(?<![\p{L}\p{M}\p{N}])`
const alternation = (words: string) => [...wordSet(words)].map((w) => w.replace(/\s+/gu, String.raw`\s+`)).join('|')

function compile(language: string): BackReference {
  const own = language === 'en' ? undefined : BACK_REFERENCES[language]
  const en = BACK_REFERENCES.en!
  const words = (field: 'pronouns' | 'openers' | 'adverbs') => `${en[field] ?? ''} ${own?.[field] ?? ''}`.trim()
  const prepositions = `${FUNCTION_WORDS.en?.prepositions ?? ''} ${language === 'en' ? '' : (FUNCTION_WORDS[language]?.prepositions ?? '')}`
  const adverbs = words('adverbs')
  return {
    afterPreposition: new RegExp(`${WORD_BEFORE}(?:${alternation(prepositions)})\\s+(?:${alternation(words('pronouns'))})${NOT_WORD}`, 'iu'),
    opener: new RegExp(`^(?:${alternation(words('openers'))})${NOT_WORD}`, 'iu'),
    adverb: adverbs ? new RegExp(`^(?:${alternation(adverbs)})${NOT_WORD}|${WORD_BEFORE}(?:${alternation(adverbs)})[\\s.!?,;:]*$`, 'iu') : null,
    articles: wordSet(`${FUNCTION_WORDS.en?.articles ?? ''} ${language === 'en' ? '' : (FUNCTION_WORDS[language]?.articles ?? '')}`),
  }
}

const RULES: ReadonlyMap<string, BackReference> = new Map(Object.keys(BACK_REFERENCES).map((language) => [language, compile(language)]))

const rulesFor = (language: string): BackReference => RULES.get(rulesLanguage(language)) ?? (RULES.get('en') as BackReference)

/** Whether an item refers back to the one before it: "A cup of coffee beside it", "Its screen shows a chart". */
function refersBack(item: string, rules: BackReference): boolean {
  const text = item.trim()
  return rules.afterPreposition.test(text) || rules.opener.test(text) || (rules.adverb?.test(text) ?? false)
}

/** Whether every item after the first refers back to the one before it: then the list is one alt text. */
export function continuesList(items: string[], language: string): boolean {
  const rules = rulesFor(language)
  return items.length > 1 && items.slice(1).every((item) => refersBack(item, rules))
}

/**
 * The items as one text: a noun phrase after a comma ("A laptop on a wooden desk, a cup of coffee beside
 * it"), a clause ("Its screen shows a chart") or an item after a finished sentence as a sentence of its own.
 */
export function joinContinuations(items: string[], language: string): string {
  const rules = rulesFor(language)
  let out = items[0]?.trim() ?? ''
  for (const raw of items.slice(1)) {
    const item = raw.trim()
    const first = /^[\p{L}\p{M}]+/u.exec(item)?.[0] ?? ''
    if (endsWithTerminalPunctuation(out, language)) out = `${out} ${item}`
    else if (!rules.opener.test(item) && rules.articles.has(first.toLowerCase()) && !/\p{Lu}/u.test(first.slice(1))) {
      out = `${out}, ${first.toLowerCase()}${item.slice(first.length)}`
    } else out = `${out}. ${item}`
  }
  return out
}
