// Counting and language codes: what every other part of the cleaner measures and looks up by.

/** Code points, not UTF-16 units: "🦊" and "𠀀" count as one character each. */
export function characterCount(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}

/** "pt-BR" → "pt"; the rules below are per base language. */
export function baseLanguage(language: string): string {
  return language.trim().toLowerCase().split(/[-_]/)[0] ?? ''
}

/** The language whose word lists apply: the base language, with Norwegian ("no", "nn") written as Bokmål ("nb"). */
export function rulesLanguage(language: string): string {
  const base = baseLanguage(language)
  return base === 'no' || base === 'nn' ? 'nb' : base
}
