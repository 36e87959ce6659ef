// The cleaner's word lists, as data: one string of space-separated words per language.

/**
 * Words that cannot end a cut-off sentence: articles, conjunctions, prepositions, possessives,
 * auxiliaries and intensifiers. A cut that would end on one drops it (and tries again).
 */
export const DANGLING_WORDS: Record<string, string> = {
  en: 'a an the and or but nor with without of in on at to for from by as into onto over under near behind beside between while whose which that who its their his my our your some is are was were very than like',
  de: 'und oder aber mit ohne von vom im in am an auf aus bei zu zum zur für der die das den dem des ein eine einen einem einer eines seine ihre sowie neben vor hinter über unter zwischen während dessen deren ist sind sehr',
  fr: 'et ou mais avec sans de du des le la les un une à au aux en dans sur sous pour par son sa ses leur leurs qui que dont est sont très',
  es: 'y e o u pero con sin de del el la los las un una unos unas a al en sobre para por su sus que es son entre muy',
  it: 'e ed o ma con senza di del della dei degli delle il lo la i gli le un uno una a al alla in nel nella su sul sulla per tra fra da dal dalla che è sono suo sua molto',
  nl: 'en of maar met zonder van de het een in op aan bij naar voor door uit over onder tussen die dat is zeer',
  pt: 'e ou mas com sem de do da dos das o a os as um uma uns umas em no na nos nas por para pelo pela sobre entre que seu sua é são muito',
  sv: 'och eller men med utan av en ett den det de i på till för från vid under över som är',
  da: 'og eller men med uden af en et den det de i på til for fra ved under over som er',
  nb: 'og eller men med uten av en et ei den det de i på til for fra ved under over som er',
}

/** Lower-case words whose period does not end a sentence ("Dr. Smith", "approx. 3 m"). */
export const ABBREVIATIONS = 'mr mrs ms dr prof st mt jr sr vs no nr fig approx ca etc inc ltd co corp hr fr sra dra sig mme mlle bzw usw z u e i'

/** The mark a sentence ends with, per language, where it is not '.'; '' = the script does not use one (Thai, Lao). */
export const SENTENCE_END: Record<string, string> = {
  ja: '。',
  zh: '。',
  hi: '।',
  bn: '।',
  ne: '।',
  sa: '।',
  pa: '।',
  as: '।',
  or: '।',
  ur: '۔',
  hy: '։',
  am: '።',
  ti: '።',
  my: '။',
  km: '។',
  th: '',
  lo: '',
}

/** Scripts written without spaces between words: cut them at clause marks and ICU word boundaries. */
export const NO_SPACE_LANGUAGES = 'ja zh th lo km my bo dz'

/** A list of words as a set, split on whitespace. */
export const wordSet = (words: string): ReadonlySet<string> => new Set(words.split(/\s+/u).filter(Boolean))
