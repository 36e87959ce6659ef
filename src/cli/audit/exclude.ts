// --exclude GLOB (repeatable): documents the audit leaves out. A file is matched by its path relative to
// the working directory and relative to each folder given; a book's content document by
// "book.epub!OEBPS/ch1.xhtml" in the same two forms; a page URL by its path ("/blog/old/x.html", with or
// without the leading "/"). Globs are Bun's own (Bun.Glob: *, **, ?, [...], {a,b}). An exclusion only
// takes documents out: nothing is read because of it.
import { isAbsolute, relative, resolve, sep } from 'node:path'
import { UsageError } from '../shared/args'

export type Exclusion = {
  /** No glob given: nothing is excluded (callers skip the work). */
  none: boolean
  /** A file (absolute path); with `inner`, that book's content document at this path in the book. */
  file(path: string, inner?: string): boolean
  /** A page URL, by its path. */
  url(url: string): boolean
}

/**
 * Why a glob is refused, or null: Bun.Glob matches an unbalanced "[" or "{" as nothing at all, so a
 * typo would exclude nothing without a word. "!" negation is not supported (a glob only excludes).
 */
export function globProblem(glob: string): string | null {
  if (glob.trim() === '') return 'is empty'
  if (glob.startsWith('!')) return 'starts with "!": negation is not supported; --exclude only takes documents out'
  if (glob.includes('\0')) return 'holds a NUL character'
  let braces = 0
  let bracket = false
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index]
    if (char === '\\') {
      if (index === glob.length - 1) return 'ends with a lone backslash'
      index++
    } else if (bracket) {
      if (char === ']') bracket = false
    } else if (char === '[') bracket = true
    else if (char === '{') braces++
    else if (char === '}') {
      if (--braces < 0) return 'has a "}" without its "{"'
    }
  }
  if (bracket) return 'has a "[" without its "]"'
  if (braces > 0) return 'has a "{" without its "}"'
  return null
}

/** The exclusion of `globs`, paths taken relative to `cwd` and to each of `folders` (absolute). Throws a UsageError for a bad glob. */
export function exclusion(globs: string[], cwd: string, folders: string[]): Exclusion {
  for (const glob of globs) {
    const problem = globProblem(glob)
    if (problem !== null) throw new UsageError(`--exclude ${JSON.stringify(glob)} ${problem}`)
  }
  const compiled = globs.map((glob) => new Bun.Glob(glob))
  const matches = (candidate: string) => compiled.some((glob) => glob.match(candidate))
  const bases = [cwd, ...folders.map((folder) => resolve(cwd, folder)).filter((folder) => folder !== cwd)]
  const forms = (path: string) =>
    bases.flatMap((base) => {
      const rel = relative(base, path)
      // A file outside a folder is not matched relative to it ("../x" would match a glob of that folder's).
      if (base !== cwd && (rel.startsWith('..') || isAbsolute(rel))) return []
      return [rel.split(sep).join('/')]
    })
  return {
    none: compiled.length === 0,
    file(path, inner) {
      if (compiled.length === 0) return false
      return forms(path).some((form) => matches(inner === undefined ? form : `${form}!${inner}`))
    },
    url(url) {
      if (compiled.length === 0) return false
      let pathname: string
      try {
        pathname = new URL(url).pathname
      } catch {
        return false
      }
      let decoded = pathname
      try {
        decoded = decodeURIComponent(pathname)
      } catch {}
      return [pathname, decoded].some((form) => matches(form) || matches(form.slice(1)))
    },
  }
}
