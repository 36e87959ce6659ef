// How --fix and --apply write a file: into a temporary file in the same folder, created exclusively under
// a random name (O_EXCL: a file or symbolic link planted there is never opened, let alone written
// through), then renamed over the target. The folder must lie inside `within` once symbolic links are
// resolved, and a target that is itself a symbolic link is refused, not followed.
import { randomUUID } from 'node:crypto'
import { existsSync, lstatSync, mkdirSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, sep } from 'node:path'
import { displayPath } from './pages'

/** `path` is `folder` or inside it (both absolute, symbolic links already resolved). */
export const isInside = (folder: string, path: string) => path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep)

/** The real path of `path`, or of its nearest existing folder with the rest appended (for a folder not made yet). */
function realPathOf(path: string): string {
  let existing = path
  const rest: string[] = []
  while (!existsSync(existing) && dirname(existing) !== existing) {
    rest.unshift(basename(existing))
    existing = dirname(existing)
  }
  return join(realpathSync(existing), ...rest)
}

/** Writes `bytes` to `path`, which must stay inside the folder `within`; throws with the reason otherwise. */
/** `cwd` is the folder the paths of the messages are shown relative to. */
export function writeFileSafely(path: string, bytes: Uint8Array, within: string, cwd: string): void {
  const folder = dirname(path)
  const realWithin = realPathOf(within)
  if (!isInside(realWithin, realPathOf(folder)))
    throw new Error(`${displayPath(folder, cwd)} leads outside ${displayPath(within, cwd)} through a symbolic link`)
  mkdirSync(folder, { recursive: true })
  // Made now: check again, in case a link appeared in between.
  if (!isInside(realWithin, realpathSync(folder)))
    throw new Error(`${displayPath(folder, cwd)} leads outside ${displayPath(within, cwd)} through a symbolic link`)
  let mode = 0o666
  try {
    const info = lstatSync(path)
    if (info.isSymbolicLink()) throw new Error(`${displayPath(path, cwd)} is a symbolic link: not followed`)
    // The file keeps its permissions.
    mode = info.mode & 0o7777
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const temporary = join(folder, `.${basename(path)}.alttext-${randomUUID()}.tmp`)
  try {
    writeFileSync(temporary, bytes, { flag: 'wx', mode })
  } catch (error) {
    // EEXIST: the name is someone else's file, never ours to remove.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') rmSync(temporary, { force: true })
    throw error
  }
  try {
    renameSync(temporary, path)
  } catch (error) {
    rmSync(temporary, { force: true })
    throw error
  }
}
