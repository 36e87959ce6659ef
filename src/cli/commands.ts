// The client and operator commands of the `alttext` binary besides `serve`. Each is loaded only when
// run, so the service does not pay for the command line. A command's `run` returns its exit code; it
// reads and writes only through its CommandIo and closes what it opened before it returns, so a test
// can run many commands in one process.
import type { CommandIo } from './shared/io'

export type CommandModule = {
  /** Runs the command with the arguments after its name; resolves to the process exit code. */
  run(argv: string[], io: CommandIo): Promise<number>
}

export type CommandEntry = {
  /** One line for `alttext --help`. */
  summary: string
  load(): Promise<CommandModule>
}

export const COMMANDS: Record<string, CommandEntry> = {
  describe: { summary: 'alt text for image files, folders and URLs', load: () => import('./describe') },
  audit: { summary: 'find and fix missing or poor alt text in HTML and Markdown files, EPUB books and web pages', load: () => import('./audit') },
  admin: { summary: 'list, make, disable and delete accounts; set plans, grant credits', load: () => import('./admin') },
  backup: { summary: 'a checked copy of the database, taken while the service runs', load: () => import('./backup') },
  restore: { summary: 'put a backup in place of the database (service stopped)', load: () => import('./backup/restore') },
  db: { summary: 'copy every record between SQLite and PostgreSQL, verified (db copy FROM TO)', load: () => import('./db') },
  ocr: { summary: 'print the text the built-in OCR reads in an image file', load: () => import('./ocr') },
  doctor: { summary: 'check the configuration, database, model hosts, mail, URL and clock', load: () => import('./doctor') },
}
