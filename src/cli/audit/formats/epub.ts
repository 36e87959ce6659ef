import { html } from './html'
import type { DocumentFormat } from './types'

export const EPUB_FILE = /\.epub$/iu
export const epub: DocumentFormat = { ...html, name: 'epub' }
