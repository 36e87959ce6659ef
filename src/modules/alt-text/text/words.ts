// The cleaner's word lists, as data: one string of space-separated words per language.

/**
 * Function words per language, by what they do at the end of a cut-off phrase. None of them can end
 * one (articles, prepositions, conjunctions, possessives, auxiliaries, intensifiers: `other`); the
 * prepositions and subordinators also start a new phrase, so a cut may go right before them, as it
 * may before a coordinator that is followed by an article (a new noun phrase: "and a …").
 */
export type FunctionWords = { articles: string; prepositions: string; coordinators: string; subordinators: string; other: string }

export const FUNCTION_WORDS: Record<string, FunctionWords> = {
  en: {
    articles: 'a an the this that these those some its their his her my our your',
    prepositions:
      'with without of in on at to for from by as into onto over under near behind beside between next across along through toward towards against among around above below beneath inside outside past',
    coordinators: 'and or but nor',
    subordinators: 'while whereas because although though which who whose where when that',
    other: 'is are was were very than like',
  },
  de: {
    articles: 'der die das den dem des ein eine einen einem einer eines seine ihre',
    prepositions: 'mit ohne von vom im in am an auf aus bei zu zum zur für neben vor hinter über unter zwischen durch gegen entlang um nach',
    coordinators: 'und oder aber sowie',
    subordinators: 'während weil wobei wo als wenn dessen deren',
    other: 'ist sind sehr',
  },
  fr: {
    articles: 'le la les un une des du son sa ses leur leurs',
    prepositions: 'avec sans de à au aux en dans sur sous pour par devant derrière entre près vers chez contre le long',
    coordinators: 'et ou mais',
    subordinators: 'tandis pendant alors qui que dont où lorsque quand',
    other: 'est sont très',
  },
  es: {
    articles: 'el la los las un una unos unas su sus',
    prepositions: 'con sin de del a al en sobre para por entre bajo tras hacia desde junto frente cerca',
    coordinators: 'y e o u pero',
    subordinators: 'mientras cuando donde que quien cuyo',
    other: 'es son muy',
  },
  it: {
    articles: 'il lo la i gli le un uno una suo sua',
    prepositions:
      'con senza di del della dei degli delle a al alla in nel nella su sul sulla per tra fra da dal dalla sotto sopra verso lungo accanto davanti dietro',
    coordinators: 'e ed o ma',
    subordinators: 'mentre quando dove che cui',
    other: 'è sono molto',
  },
  nl: {
    articles: 'de het een zijn haar',
    prepositions: 'met zonder van in op aan bij naar voor door uit over onder tussen langs achter naast tegen',
    coordinators: 'en of maar',
    subordinators: 'terwijl wanneer waar die dat omdat',
    other: 'is zijn zeer',
  },
  pt: {
    articles: 'o a os as um uma uns umas seu sua seus suas',
    prepositions: 'com sem de do da dos das em no na nos nas por para pelo pela sobre entre sob atrás diante perto junto',
    coordinators: 'e ou mas',
    subordinators: 'enquanto quando onde que cujo',
    other: 'é são muito',
  },
  pl: {
    articles: 'jego jej ich',
    prepositions: 'z ze w we na do od po przy pod nad przed za dla o u przez między obok wśród',
    coordinators: 'i oraz lub albo ale a',
    subordinators: 'podczas gdy kiedy który która które którzy gdzie że',
    other: 'jest są bardzo',
  },
  sv: {
    articles: 'en ett den det de sin sitt sina',
    prepositions: 'med utan av i på till för från vid under över bakom bredvid mellan längs genom mot',
    coordinators: 'och eller men',
    subordinators: 'medan när där som',
    other: 'är mycket',
  },
  da: {
    articles: 'en et den det de sin sit sine',
    prepositions: 'med uden af i på til for fra ved under over bag ved siden mellem langs gennem mod',
    coordinators: 'og eller men',
    subordinators: 'mens når hvor som',
    other: 'er meget',
  },
  nb: {
    articles: 'en et ei den det de sin sitt sine',
    prepositions: 'med uten av i på til for fra ved under over bak mellom langs gjennom mot',
    coordinators: 'og eller men',
    subordinators: 'mens når hvor som',
    other: 'er veldig',
  },
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

/**
 * Words by which a list item refers back to the one before it, so it continues it and is no second
 * option ("- A laptop on a desk / - A cup of coffee beside it"): `pronouns` right after a preposition
 * of FUNCTION_WORDS ("beside it", "next to them"), `openers` as the item's first word ("Its screen …"),
 * `adverbs` as its first or last word ("Daneben …", "… ernaast"). English words count in every language.
 */
export type BackReferences = { pronouns: string; openers: string; adverbs?: string }

export const BACK_REFERENCES: Record<string, BackReferences> = {
  en: { pronouns: 'it them', openers: 'it its they their there' },
  de: {
    pronouns: 'ihm ihr ihn ihnen es',
    openers: 'es sein seine seinem seinen seiner',
    adverbs: 'daneben darauf darunter dahinter davor darin darüber dazwischen',
  },
  fr: { pronouns: 'lui eux', openers: 'son sa ses', adverbs: 'dessus dessous dedans' },
  es: { pronouns: 'él ella ellos ellas', openers: 'su sus', adverbs: 'encima debajo detrás delante' },
  it: { pronouns: 'lui lei loro esso essa', openers: 'suo sua suoi sue', adverbs: 'accanto sopra sotto dietro davanti' },
  nl: { pronouns: 'hem hen', openers: 'zijn hun', adverbs: 'ernaast erop eronder erachter ervoor erin erboven' },
  pt: { pronouns: 'ele ela eles elas', openers: 'seu sua seus suas', adverbs: 'atrás embaixo' },
}
