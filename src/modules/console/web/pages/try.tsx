// Try it: an image from a file (chosen or dropped) or a URL, the request's options, and the answer: the
// image, the alt text with its length against the limit, a complex image's long description, the WCAG issues, the credits, and the curl
// command that makes the same call.
import { useEffect, useRef, useState } from 'preact/hooks'
import { type AltTextResult, api } from '../api'
import { CopyButton, ErrorMessage, Field, ModelStatus, Page, Status, useAction } from '../components'
import { formatBytes } from '../format'

/** Suggested tags for the language field; any BCP 47 tag may be typed. */
const LANGUAGES: [string, string][] = [
  ['en', 'English'],
  ['ar', 'Arabic'],
  ['zh', 'Chinese'],
  ['cs', 'Czech'],
  ['da', 'Danish'],
  ['nl', 'Dutch'],
  ['fi', 'Finnish'],
  ['fr', 'French'],
  ['de', 'German'],
  ['el', 'Greek'],
  ['he', 'Hebrew'],
  ['hi', 'Hindi'],
  ['hu', 'Hungarian'],
  ['it', 'Italian'],
  ['ja', 'Japanese'],
  ['ko', 'Korean'],
  ['nb', 'Norwegian Bokmål'],
  ['pl', 'Polish'],
  ['pt', 'Portuguese'],
  ['pt-BR', 'Brazilian Portuguese'],
  ['en-GB', 'British English'],
  ['zh-Hant', 'Traditional Chinese'],
  ['ro', 'Romanian'],
  ['ru', 'Russian'],
  ['es', 'Spanish'],
  ['sv', 'Swedish'],
  ['tr', 'Turkish'],
  ['uk', 'Ukrainian'],
]
const ACCEPTED = 'image/jpeg,image/png,image/gif,image/webp,image/avif,image/svg+xml'
const MAX_BYTES = 10 * 1024 * 1024

export type TryOptions = {
  /** One tag (sent as language), or several (sent as languages: the first described, the others translated). */
  languages: string[]
  style: string
  maxLength: number
  context: string
  keywords: string[]
  decorative: boolean
  longDescription: boolean
}

/** A word for the shell: single-quoted, with single quotes inside closed, escaped and reopened. */
const shellWord = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`)

export function curlCommand(origin: string, image: { file: string } | { url: string }, options: TryOptions): string {
  const lines = [`curl -sS ${shellWord(`${origin}/api/alt-text`)}`, `-H "X-API-Key: $ALTTEXT_API_KEY"`]
  if ('file' in image) {
    lines.push(`-F ${shellWord(`image=@${image.file}`)}`)
    const field = (name: string, value: string) => lines.push(`--form-string ${shellWord(`${name}=${value}`)}`)
    if (options.languages.length === 1) field('language', options.languages[0]!)
    else for (const tag of options.languages) field('languages', tag)
    field('style', options.style)
    field('max_length', String(options.maxLength))
    if (options.context) field('context', options.context)
    for (const keyword of options.keywords) field('keywords', keyword)
    if (options.decorative) field('detect_decorative', 'true')
    if (options.longDescription) field('long_description', 'true')
  } else {
    lines.push(`-H 'Content-Type: application/json'`)
    lines.push(`-d ${shellWord(JSON.stringify(jsonBody(image.url, options)))}`)
  }
  return lines.join(' \\\n  ')
}

function jsonBody(url: string, options: TryOptions): Record<string, unknown> {
  return {
    image_url: url,
    ...(options.languages.length === 1 ? { language: options.languages[0] } : { languages: options.languages }),
    style: options.style,
    max_length: options.maxLength,
    ...(options.context ? { context: options.context } : {}),
    ...(options.keywords.length ? { keywords: options.keywords } : {}),
    ...(options.decorative ? { detect_decorative: true } : {}),
    ...(options.longDescription ? { long_description: true } : {}),
  }
}

function readOptions(form: HTMLFormElement): TryOptions {
  const field = (name: string) => form.elements.namedItem(name) as HTMLInputElement
  return {
    languages: field('language')
      .value.split(',')
      .map((tag) => tag.trim())
      .filter(Boolean),
    style: field('style').value,
    maxLength: Number(field('max_length').value) || 125,
    context: field('context').value.trim(),
    keywords: field('keywords')
      .value.split(',')
      .map((k) => k.trim())
      .filter(Boolean),
    decorative: field('detect_decorative').checked,
    longDescription: field('long_description').checked,
  }
}

type Outcome = { result: AltTextResult; options: TryOptions; curl: string; preview: string | null }

export function TryIt() {
  const [source, setSource] = useState<'file' | 'url'>('file')
  const [file, setFile] = useState<File | null>(null)
  const [preview, setPreview] = useState<string | null>(null)
  const [dragging, setDragging] = useState(false)
  const [problem, setProblem] = useState('')
  const [outcome, setOutcome] = useState<Outcome | null>(null)
  const [said, setSaid] = useState('')
  const { busy, error, run } = useAction()
  const fileInput = useRef<HTMLInputElement>(null)
  const resultHeading = useRef<HTMLHeadingElement>(null)
  const submitButton = useRef<HTMLButtonElement>(null)
  // Where the focus goes once the request ends: the disabled button lost it to <body> meanwhile.
  const [focusTo, setFocusTo] = useState<'result' | 'button' | null>(null)
  useEffect(() => {
    if (focusTo === null || busy) return
    setFocusTo(null)
    // Only when nothing else took it while the request ran.
    if (document.activeElement !== null && document.activeElement !== document.body) return
    ;(focusTo === 'result' ? resultHeading : submitButton).current?.focus()
  }, [focusTo, busy])

  useEffect(() => {
    if (!file) return setPreview(null)
    const url = URL.createObjectURL(file)
    setPreview(url)
    return () => URL.revokeObjectURL(url)
  }, [file])

  const choose = (chosen: File | null | undefined) => {
    setProblem('')
    setOutcome(null)
    if (!chosen) return setFile(null)
    if (!ACCEPTED.split(',').includes(chosen.type))
      setProblem(`${chosen.name} is not a JPEG, PNG, GIF, WebP, AVIF or SVG image. The service may still refuse or accept it by its content.`)
    else if (chosen.size > MAX_BYTES) setProblem(`${chosen.name} is ${formatBytes(chosen.size)}: the service takes images up to 10 MB.`)
    setFile(chosen)
  }
  const drop = (event: DragEvent) => {
    event.preventDefault()
    setDragging(false)
    const dropped = event.dataTransfer?.files[0]
    if (!dropped) return
    setSource('file')
    if (fileInput.current && event.dataTransfer) fileInput.current.files = event.dataTransfer.files
    choose(dropped)
  }

  const submit = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const options = readOptions(form)
    const url = (form.elements.namedItem('image_url') as HTMLInputElement | null)?.value.trim() ?? ''
    if (source === 'file' && !file) return setProblem('Choose an image file first, or switch to an image URL.')
    setSaid('')
    let body: FormData | Record<string, unknown>
    let curl: string
    if (source === 'file' && file) {
      const data = new FormData()
      data.append('image', file, file.name)
      if (options.languages.length === 1) data.append('language', options.languages[0]!)
      else for (const tag of options.languages) data.append('languages', tag)
      data.append('style', options.style)
      data.append('max_length', String(options.maxLength))
      if (options.context) data.append('context', options.context)
      for (const keyword of options.keywords) data.append('keywords', keyword)
      data.append('detect_decorative', String(options.decorative))
      data.append('long_description', String(options.longDescription))
      body = data
      curl = curlCommand(location.origin, { file: file.name }, options)
    } else {
      body = jsonBody(url, options)
      curl = curlCommand(location.origin, { url }, options)
    }
    const result = await run(() => api.altText(body))
    setFocusTo(result ? 'result' : 'button')
    if (!result) return setOutcome(null)
    setOutcome({ result, options, curl, preview: source === 'file' ? preview : null })
    const long = result.long_description ? '. A long description follows it.' : ''
    setSaid(result.decorative ? 'Done: the image is decorative, so its alt text is empty.' : `Done: the alt text is “${result.alt_text}”${long}`)
  }

  return (
    <Page
      title="Try it"
      intro="Describe one image, with the options your program would send. Each new image costs one credit; an image described before is free."
    >
      <ModelStatus />
      <form onSubmit={submit} aria-describedby="try-note">
        <fieldset>
          <legend>Image</legend>
          <div class="choices">
            <label>
              <input type="radio" name="source" value="file" checked={source === 'file'} onChange={() => setSource('file')} /> Upload a file
            </label>
            <label>
              <input type="radio" name="source" value="url" checked={source === 'url'} onChange={() => setSource('url')} /> From a URL
            </label>
          </div>
          {source === 'file' ? (
            // biome-ignore lint/a11y/noStaticElementInteractions: the drop area is a convenience; its file input is the keyboard way in.
            <div
              class={dragging ? 'drop dragging' : 'drop'}
              onDragOver={(e) => {
                e.preventDefault()
                setDragging(true)
              }}
              onDragLeave={() => setDragging(false)}
              onDrop={drop}
            >
              <label for="image-file">Image file (JPEG, PNG, GIF, WebP, AVIF or SVG, up to 10 MB)</label>
              <input id="image-file" ref={fileInput} type="file" name="image" accept={ACCEPTED} onChange={(e) => choose(e.currentTarget.files?.[0])} />
              <p class="hint">…or drop the file here.</p>
              {file && (
                <p class="chosen">
                  {file.name}, {formatBytes(file.size)}
                </p>
              )}
              {preview && !outcome && <img src={preview} alt={`Preview of ${file?.name ?? 'the chosen file'}`} class="preview" />}
            </div>
          ) : (
            <Field
              id="image-url"
              name="image_url"
              type="url"
              label="Image URL"
              hint="A public https address of a JPEG, PNG, GIF, WebP, AVIF or SVG image."
              required
              placeholder="https://"
            />
          )}
          <p class="problem" role="alert">
            {problem}
          </p>
        </fieldset>
        <fieldset>
          <legend>Options</legend>
          <div class="grid">
            <div class="field">
              <label for="language">Language</label>
              <p class="hint" id="language-hint">
                A language tag such as de, pt-BR or zh-Hant; or up to 5, separated by commas: the first is described, the others translated (a credit each).
              </p>
              <input id="language" name="language" list="language-tags" defaultValue="en" required autocomplete="off" aria-describedby="language-hint" />
              <datalist id="language-tags">
                {LANGUAGES.map(([code, name]) => (
                  <option key={code} value={code}>
                    {name}
                  </option>
                ))}
              </datalist>
            </div>
            <div class="field">
              <label for="style">Style</label>
              <select id="style" name="style">
                <option value="descriptive">Descriptive</option>
                <option value="concise">Concise</option>
              </select>
            </div>
            <Field id="max_length" name="max_length" type="number" label="Maximum length (characters)" min={20} max={1000} defaultValue="125" required />
          </div>
          <div class="field">
            <label for="context">Context (optional)</label>
            <p class="hint" id="context-hint">
              What the page around the image is about. It helps, but never overrides what is visible.
            </p>
            <textarea id="context" name="context" rows={2} maxLength={1000} aria-describedby="context-hint" />
          </div>
          <Field
            id="keywords"
            name="keywords"
            label="Keywords (optional)"
            hint="Up to 10, separated by commas. Used only where they fit the image."
            autocomplete="off"
          />
          <label class="check">
            <input type="checkbox" name="detect_decorative" id="detect_decorative" /> Detect decorative images (their alt text is empty)
          </label>
          <label class="check">
            <input type="checkbox" name="long_description" id="long_description" /> Write a long description of a complex image (a chart, diagram, map or table)
          </label>
        </fieldset>
        <p id="try-note" class="hint">
          The image goes to this service only; the console shows a preview of a file from your computer, not of images on other sites.
        </p>
        <ErrorMessage error={error} />
        <button type="submit" disabled={busy} ref={submitButton}>
          {busy ? 'Describing the image…' : 'Describe the image'}
        </button>
      </form>
      <Status message={said} class="visually-hidden" />
      <section aria-labelledby="result-h" aria-busy={busy}>
        <h2 id="result-h" ref={resultHeading} tabIndex={-1}>
          Result
        </h2>
        {outcome ? <Result outcome={outcome} /> : <p class="muted">{busy ? 'Describing the image…' : 'The alt text will appear here.'}</p>}
      </section>
    </Page>
  )
}

/** A complex image's long description, for a page to put beside the image (aria-describedby or a <details>); or why there is none. */
function LongDescription({ text }: { text: string | null }) {
  if (text === null) return <p id="long-none">No long description: the model did not judge the image complex.</p>
  return (
    <div class="field">
      <label for="long-output">Long description</label>
      <textarea id="long-output" readOnly rows={6} value={text} aria-describedby="long-length" />
      <p id="long-length" class="hint">
        {Array.from(text).length} characters. Put it on the page beside the image and point the image at it with aria-describedby.
      </p>
      <CopyButton text={text} label="Copy the long description" field="long-output" />
    </div>
  )
}

/** What the answer cost: a credit per language generated (the console does not know which were cached when some were). */
function creditsText(result: AltTextResult): string {
  if (result.cached) return `Cached answer: no credit used. ${result.credits_remaining} left.`
  if (result.alt_texts) return `At most ${Object.keys(result.alt_texts).length} credits used (cached languages are free), ${result.credits_remaining} left.`
  return `1 credit used, ${result.credits_remaining} left.`
}

/** Every language of a languages answer: its alt text to copy and its checks; and the languages that failed. */
function Translations({ result }: { result: AltTextResult }) {
  const entries = Object.entries(result.alt_texts ?? {})
  return (
    <div>
      <h3>Alt text per language</h3>
      {entries.map(([tag, text], index) => (
        <div class="field" key={tag}>
          <label for={`alt-${index}`} lang={tag}>
            {tag}
          </label>
          <textarea id={`alt-${index}`} lang={tag} readOnly rows={2} value={text.alt_text} aria-describedby={`alt-${index}-checks`} />
          <p id={`alt-${index}-checks`} class={text.wcag_compliant ? 'hint' : 'hint error-text'}>
            {text.character_count} characters. {text.wcag_compliant ? 'Passes every check.' : text.wcag_issues.join('; ')}
          </p>
          <CopyButton text={text.alt_text} label={`Copy the ${tag} alt text`} field={`alt-${index}`} />
        </div>
      ))}
      {(result.failed_languages ?? []).length > 0 && (
        <p role="note">Not translated (no credit used): {(result.failed_languages ?? []).join(', ')}. Try them again later.</p>
      )}
    </div>
  )
}

function Result({ outcome }: { outcome: Outcome }) {
  const { result, options, curl } = outcome
  const over = result.character_count > options.maxLength
  return (
    <div class="result">
      {outcome.preview && (
        <img
          src={outcome.preview}
          alt={result.decorative ? '' : result.alt_text}
          class="preview"
          aria-describedby={result.long_description ? 'long-output' : undefined}
        />
      )}
      {result.decorative ? (
        <div>
          <p>
            <strong>Decorative image.</strong> Use an empty alt attribute (<code>alt=""</code>) so screen readers skip it.
          </p>
          {result.decorative_reason && <p>Why: {result.decorative_reason}</p>}
        </div>
      ) : (
        <div class="field">
          <label for="alt-output">Alt text</label>
          <textarea id="alt-output" readOnly rows={3} value={result.alt_text} aria-describedby="alt-length" />
          <p id="alt-length" class={over ? 'hint error-text' : 'hint'}>
            {result.character_count} of at most {options.maxLength} characters
          </p>
          <CopyButton text={result.alt_text} label="Copy the alt text" field="alt-output" />
          {result.text_in_image && <p>Text in the image: “{result.text_in_image}”</p>}
        </div>
      )}
      {options.longDescription && !result.decorative && <LongDescription text={result.long_description ?? null} />}
      {result.alt_texts && !result.decorative && <Translations result={result} />}
      <h3>WCAG checks</h3>
      {result.wcag_compliant ? (
        <p>Passes every check.</p>
      ) : (
        <ul class="issues">
          {result.wcag_issues.map((issue) => (
            <li key={issue}>{issue}</li>
          ))}
        </ul>
      )}
      <dl class="facts">
        <div>
          <dt>Credits</dt>
          <dd>{creditsText(result)}</dd>
        </div>
        <div>
          <dt>Image</dt>
          <dd>
            {result.image.format.toUpperCase()}, {result.image.width} × {result.image.height} px
          </dd>
        </div>
        <div>
          <dt>Language</dt>
          <dd>{result.language}</dd>
        </div>
      </dl>
      <h3 id="curl-h">The same call with curl</h3>
      <pre>
        <code>{curl}</code>
      </pre>
      <CopyButton text={curl} label="Copy the curl command" />
    </div>
  )
}
