// Which format reads a file: by its extension (.md/.markdown, .mdx, .ipynb, .epub), HTML otherwise.
// Page URLs are always HTML: the command fetches only HTML answers.
import type { PageSource } from '../pages'
import { epub, EPUB_FILE } from './epub'
import { html } from './html'
import { IPYNB_FILE, ipynb } from './ipynb'
import { MARKDOWN_FILE, markdown } from './markdown'
import { MDX_FILE, mdx } from './mdx'
import type { DocumentFormat } from './types'

export type { AltChange, DocumentFormat, ScannedDocument } from './types'

export function formatFor(source: PageSource): DocumentFormat {
  if (source.kind === 'url') return html
  if (MARKDOWN_FILE.test(source.path)) return markdown
  if (MDX_FILE.test(source.path)) return mdx
  if (IPYNB_FILE.test(source.path)) return ipynb
  if (EPUB_FILE.test(source.path)) return epub
  return html
}
