// Which format reads a file: by its extension (.md/.markdown, .epub), HTML otherwise (page URLs included).
import { epub, EPUB_FILE } from './epub'
import { html } from './html'
import { MARKDOWN_FILE, markdown } from './markdown'
import type { DocumentFormat } from './types'

export type { AltChange, DocumentFormat, ScannedDocument } from './types'

export function formatFor(path: string): DocumentFormat {
  if (MARKDOWN_FILE.test(path)) return markdown
  if (EPUB_FILE.test(path)) return epub
  return html
}
