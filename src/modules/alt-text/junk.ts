// Answers that are no alt text however clean they are: one character repeated ("AAAA…", a runaway
// model), our own prompt given back (a broken chat template), or a URL alone. The service treats them
// as an answer with nothing usable: 502 upstream_error, nothing charged.
import { buildPrompt, buildShortenPrompt, type PromptInput } from './prompt'
import { withoutTrailingPunctuation } from './text'
import { looksLikeUrl } from './wcag'

export type JunkKind = 'one repeated character' | 'an echo of the prompt' | 'a bare URL'

/** An answer shorter than this many word triples is not judged an echo: too little to tell. */
const MIN_ECHO_TRIPLES = 4
/** Share of an answer's word triples (its caller data aside) found in our instructions that makes it an echo. */
const ECHO_SHARE = 0.6

const words = (text: string) =>
  text
    .normalize('NFKC')
    .toLocaleLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? []

function triples(text: string): string[] {
  const list = words(text)
  return list.slice(2).map((word, i) => `${list[i]} ${list[i + 1]} ${word}`)
}

/**
 * The junk check of one request's answers. Its instructions are the prompts built without the caller's
 * context and keywords: an alt text may well repeat those (they describe the page), never our rules.
 */
export function junkCheck(input: PromptInput): (text: string) => JunkKind | null {
  const bare: PromptInput = { ...input, context: null, keywords: [] }
  const prompts = [buildPrompt(bare), buildPrompt(bare, true), buildShortenPrompt(bare, '')]
  const instructions = new Set(prompts.flatMap((p) => [...triples(p.system), ...triples(p.user)]))
  const data = new Set([...triples(input.context ?? ''), ...triples(input.keywords.join(' '))])

  return (text) => {
    const letters =
      withoutTrailingPunctuation(text)
        .toLocaleLowerCase()
        .match(/[\p{L}\p{N}]/gu) ?? []
    if (letters.length >= 3 && new Set(letters).size === 1) return 'one repeated character'
    if (looksLikeUrl(text)) return 'a bare URL'
    const own = triples(text).filter((t) => instructions.has(t) || !data.has(t))
    const echoed = own.filter((t) => instructions.has(t)).length
    if (own.length >= MIN_ECHO_TRIPLES && echoed / own.length >= ECHO_SHARE) return 'an echo of the prompt'
    return null
  }
}
