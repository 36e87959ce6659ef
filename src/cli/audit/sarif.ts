// The audit's findings as SARIF 2.1.0, for code-scanning tools (GitHub code scanning, GitLab, IDEs):
// one run, a rule per kind of finding, one result per image that needs work, at its file, line and
// column. Locations name files relative to the working directory (in CI, the repository checkout, which
// is what code scanning resolves them against), so `alttext audit site/` reports `site/index.html`. A
// result inside a book is located at the book (the file a viewer can open) with the content document
// as its logical location and in its message, and the run's artifacts nest the document in the book.
import { createHash } from 'node:crypto'
import { isAbsolute, relative, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import { VERSION } from '../../version'
import type { PageSource } from './pages'
import { type Finding, NEEDS_ALT, type PageResult } from './report'

const SCHEMA = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json'
/**
 * The driver's informationUri (SARIF2005 wants an absolute URI): the audit's documentation in the
 * project's public repository, the same address the WordPress plugin names as its home.
 */
export const TOOL_INFORMATION_URI = 'https://github.com/alttext/alttext/blob/main/docs/audit.md'
/** WCAG's success criterion 1.1.1, which every rule here serves. */
const WCAG_NON_TEXT_CONTENT = 'https://www.w3.org/WAI/WCAG22/Understanding/non-text-content.html'

type Level = 'error' | 'warning' | 'note'
/** `fix`: what to do about it, in a sentence or two (the rule's `help`, which GitHub code scanning shows). */
type Rule = { id: string; name: string; short: string; full: string; fix: string; level: Level }

/**
 * Every rule the audit can report. The lint's kinds (missing, empty, poor, long) and, from a judged run,
 * the verdicts that are not `ok`. Ids never change: code scanning matches alerts across runs by them.
 */
export const SARIF_RULES = {
  missing: {
    id: 'alt-missing',
    name: 'MissingAltText',
    short: 'Image without alt text',
    full: 'The image has no alt attribute (no aria-label for role=img): screen readers announce its file name or nothing.',
    fix: 'Add an alt attribute that says what the image shows or does in its context (alt="" only for an image that adds nothing). `alttext audit --fix` proposes one to review.',
    level: 'error',
  },
  empty: {
    id: 'alt-empty',
    name: 'EmptyAltText',
    short: 'Empty alt text that leaves a link or button without a name',
    full: 'alt="" marks an image decorative, but this image is the only content of a link or button (or an image button, or named by an empty aria-label): screen readers announce it without a name.',
    fix: 'Give the link or button a name: alt text that says where the link goes or what the button does, or an aria-label on the link or button itself.',
    level: 'warning',
  },
  poor: {
    id: 'alt-poor',
    name: 'PoorAltText',
    short: 'Alt text that fails the lint',
    full: 'The alt text is a file name, a URL, "image of…", a placeholder word, markup, an emoji, or too long.',
    fix: 'Replace it with a short description of what the image shows or does in its context: no file name, no "image of", no placeholder. `alttext audit --fix` proposes one.',
    level: 'warning',
  },
  needs_fix: {
    id: 'alt-judged-needs-fix',
    name: 'AltTextNeedsFix',
    short: 'Alt text judged wrong for its image',
    full: 'The model judged that the alt text does not describe the image in its context.',
    fix: "Rewrite the alt text from what the image shows, including any text the image carries; the audit report has the model's suggestion.",
    level: 'warning',
  },
  keyword_stuffed: {
    id: 'alt-judged-keyword-stuffed',
    name: 'AltTextKeywordStuffed',
    short: 'Alt text judged keyword stuffing',
    full: 'The model judged that the alt text lists keywords instead of describing the image.',
    fix: 'Describe the image in a sentence instead of listing search terms; keep only the words that say what is shown.',
    level: 'warning',
  },
  decorative: {
    id: 'alt-judged-decorative',
    name: 'AltTextOnDecorativeImage',
    short: 'Alt text on an image judged decorative',
    full: 'The model judged the image purely decorative: alt="" would spare screen-reader users its text.',
    fix: 'If the image adds nothing to the page, set alt="" (or role="presentation"); if it does, keep the alt text and ignore this note.',
    level: 'note',
  },
  // Last: the rules before it keep their indices.
  long: {
    id: 'alt-long',
    name: 'LongAltText',
    short: 'Alt text longer than --max-length',
    full: 'A person wrote an alt text longer than the length set (125 characters by default). WCAG sets no limit, so it is kept; if the image needs that much, a short alt with a long description (aria-describedby, a caption) reads better.',
    fix: 'Shorten the alt text to what the image is for, and put the details in a caption or a long description linked with aria-describedby.',
    level: 'note',
  },
} as const satisfies Record<string, Rule>

export type SarifRuleKind = keyof typeof SARIF_RULES

/** The rule of a finding from the lint; null when the image needs no work. */
export function lintRule(finding: Finding): SarifRuleKind | null {
  // A judged alt text passed the lint: its verdict (--judge) names the rule.
  const verdict = finding.verdict?.verdict
  if (verdict === 'needs_fix' || verdict === 'keyword_stuffed' || verdict === 'decorative') return verdict
  if (finding.status === 'long') return 'long'
  return NEEDS_ALT.has(finding.status) ? (finding.status as 'missing' | 'empty' | 'poor') : null
}

/**
 * A page's address as a SARIF artifact location: a path relative to `cwd` when the file lies inside it
 * (each segment percent-encoded), else a file: URI; a page URL as it is.
 */
export function artifactUri(source: PageSource, cwd: string): string {
  if (source.kind === 'url') return source.url
  const rel = relative(cwd, source.path)
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return pathToFileURL(source.path).href
  return rel.split(sep).map(encodeURIComponent).join('/')
}

/**
 * A plain-text SARIF message: `[text](n)` there is an embedded link (SARIF 2.1.0 §3.11.6), so a page's
 * own brackets (an alt text "[x](https://…)") are escaped with a backslash, and so is a backslash.
 */
const sarifText = (text: string): string => text.replace(/[\\[\]]/gu, (char) => `\\${char}`)

const quote = (text: string, max = 80) => `"${text.length > max ? `${text.slice(0, max - 1)}…` : text}"`

function message(finding: Finding, kind: SarifRuleKind): string {
  const image = finding.src === null ? 'An image without a source' : `The image ${finding.src}`
  const parts: string[] = []
  if (kind === 'missing') parts.push(`${image} has no ${finding.attribute}.`)
  else if (kind === 'empty') parts.push(`${image} has an empty ${finding.attribute}: ${finding.issues.join('; ')}.`)
  else if (kind === 'poor') parts.push(`${image} has a poor ${finding.attribute} ${quote(finding.alt ?? '')}: ${finding.issues.join('; ')}.`)
  else if (kind === 'long') parts.push(`${image} has a long ${finding.attribute} ${quote(finding.alt ?? '')}: ${finding.issues.join('; ')}.`)
  else parts.push(`${image}: ${SARIF_RULES[kind].short.toLowerCase()} (${quote(finding.alt ?? '')}).`)
  const suggestion = finding.suggestion
  if (suggestion) parts.push(suggestion.alt === '' ? 'Suggested: alt="" (decorative).' : `Suggested: ${quote(suggestion.alt, 300)}.`)
  return parts.join(' ')
}

/**
 * A fingerprint that survives edits elsewhere in the file: the file, the rule, the image address and
 * its current text, and which occurrence of that same image it is (not the line, which moves).
 */
function fingerprint(uri: string, kind: SarifRuleKind, finding: Finding, occurrence: number): string {
  return createHash('sha256')
    .update(JSON.stringify([uri, SARIF_RULES[kind].id, finding.src, finding.attribute, finding.alt, occurrence]))
    .digest('hex')
    .slice(0, 32)
}

/** A document's findings; `inner`: the content document's path inside the book `source` ("OEBPS/ch1.xhtml"). */
export type SarifPage = { source: PageSource; result: PageResult; inner?: string }

/**
 * The SARIF log of a run. `ruleOf` decides which rule an image's finding falls under (the lint's by
 * default; a judged run adds its verdicts). With `baseline` each result says whether the baseline
 * accepted it (`baselineState` unchanged or new).
 */
export function sarifLog(pages: SarifPage[], options: { cwd: string; baseline?: boolean; ruleOf?: (finding: Finding) => SarifRuleKind | null }): string {
  const ruleOf = options.ruleOf ?? lintRule
  const kinds = Object.keys(SARIF_RULES) as SarifRuleKind[]
  const results: object[] = []
  // A page that could not be read has no results, which would read as "no findings": it is a notification.
  const unread: object[] = []
  // An image whose picture could not be read, with no result of its own: a note (it fails nothing).
  const notes: object[] = []
  for (const { source, result, inner } of pages) {
    const uri = artifactUri(source, options.cwd)
    const where = inner === undefined ? uri : `${uri}!${inner}`
    if (result.error !== null) {
      unread.push({
        level: 'error',
        message: { text: sarifText(`${result.page} could not be checked: ${result.error}`) },
        locations: [{ physicalLocation: { artifactLocation: { uri } } }],
      })
      continue
    }
    const seen = new Map<string, number>()
    for (const finding of result.images) {
      const kind = ruleOf(finding)
      const region = { startLine: finding.line, startColumn: finding.column }
      if (kind === null) {
        if (finding.not_checked !== null) {
          notes.push({
            level: 'note',
            message: {
              text: sarifText(`${inner === undefined ? '' : `In ${inner}: `}The image ${finding.src ?? '(no src)'} was not checked: ${finding.not_checked}.`),
            },
            locations: [{ physicalLocation: { artifactLocation: { uri }, region } }],
          })
        }
        continue
      }
      const same = JSON.stringify([kind, finding.src, finding.alt])
      const occurrence = (seen.get(same) ?? 0) + 1
      seen.set(same, occurrence)
      let text = message(finding, kind)
      if (finding.not_checked !== null) text += ` The image itself was not checked: ${finding.not_checked}.`
      const location: Record<string, unknown> = { physicalLocation: { artifactLocation: { uri }, region } }
      if (inner !== undefined) {
        // Viewers (GitHub code scanning among them) show the physical location only: it is the book, the
        // file in the repository, at the line and column in its content document; the message and the
        // logical location name that document (docs/audit.md says why not SARIF's nested artifacts).
        text = `In ${inner}: ${text}`
        location.logicalLocations = [{ name: inner.split('/').at(-1), fullyQualifiedName: inner }]
      }
      const prints: Record<string, string> = { 'alttextImage/v1': fingerprint(where, kind, finding, occurrence) }
      if (finding.fingerprint !== undefined) prints['alttextFinding/v1'] = finding.fingerprint
      results.push({
        ruleId: SARIF_RULES[kind].id,
        ruleIndex: kinds.indexOf(kind),
        level: SARIF_RULES[kind].level,
        message: { text: sarifText(text) },
        locations: [location],
        partialFingerprints: prints,
        ...(options.baseline && { baselineState: finding.baseline === 'unchanged' ? 'unchanged' : 'new' }),
      })
    }
  }
  const notifications = [...unread, ...notes]
  const log = {
    $schema: SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'alttext audit',
            version: VERSION,
            semanticVersion: VERSION,
            informationUri: TOOL_INFORMATION_URI,
            rules: kinds.map((kind) => {
              const rule: Rule = SARIF_RULES[kind]
              return {
                id: rule.id,
                name: rule.name,
                shortDescription: { text: rule.short },
                fullDescription: { text: rule.full },
                help: {
                  text: `${rule.full} ${rule.fix}`,
                  markdown: `${rule.full}\n\n**How to fix:** ${rule.fix}\n\nWCAG 2.2, [1.1.1 Non-text Content](${WCAG_NON_TEXT_CONTENT}).`,
                },
                helpUri: WCAG_NON_TEXT_CONTENT,
                defaultConfiguration: { level: rule.level },
                properties: { tags: ['accessibility', 'wcag-1.1.1'] },
              }
            }),
          },
        },
        invocations: [{ executionSuccessful: unread.length === 0, ...(notifications.length > 0 ? { toolExecutionNotifications: notifications } : {}) }],
        columnKind: 'utf16CodeUnits',
        results,
      },
    ],
  }
  return `${JSON.stringify(log, null, 2)}\n`
}
