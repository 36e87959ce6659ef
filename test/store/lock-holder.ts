// Another process holding the database's write lock, as a backup or `sqlite3` with BEGIN IMMEDIATE does.
// Coordinated over stdin/stdout: it says "locked" once it holds the lock and "released" once it let go.
import type { Subprocess } from 'bun'

const SCRIPT = `
const { Database } = require('bun:sqlite')
const db = new Database(process.env.LOCK_DB)
// Whoever writes at this instant (a migration at start, say) is waited for: "locked" means it holds the lock.
db.exec('PRAGMA busy_timeout = 10000')
db.exec('BEGIN IMMEDIATE')
console.log('locked')
for await (const line of console) {
  if (line.trim() === 'release') break
}
db.exec('ROLLBACK')
db.close()
console.log('released')
`

export type LockHolder = {
  /** Ends the other process's transaction and waits until it says so. */
  release(): Promise<void>
  /** Kills the process if it is still there (for `finally`). */
  stop(): Promise<void>
}

export async function holdWriteLock(dbPath: string): Promise<LockHolder> {
  const proc: Subprocess<'pipe', 'pipe', 'pipe'> = Bun.spawn([process.execPath, '-e', SCRIPT], {
    env: { PATH: process.env.PATH ?? '', LOCK_DB: dbPath },
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const lines: string[] = []
  const waiters: { word: string; resolve: () => void }[] = []
  let text = ''
  const decoder = new TextDecoder()
  void (async () => {
    for await (const chunk of proc.stdout) {
      text += decoder.decode(chunk, { stream: true })
      const parts = text.split('\n')
      text = parts.pop() ?? ''
      lines.push(...parts.map((l) => l.trim()))
      for (const w of waiters.filter((w) => lines.includes(w.word))) w.resolve()
    }
  })()
  const said = (word: string) =>
    new Promise<void>((resolve, reject) => {
      if (lines.includes(word)) return resolve()
      waiters.push({ word, resolve })
      void proc.exited.then(async (code) => {
        if (!lines.includes(word)) reject(new Error(`lock holder exited with ${code} before "${word}": ${await new Response(proc.stderr).text()}`))
      })
    })
  await said('locked')
  return {
    async release() {
      proc.stdin.write('release\n')
      await proc.stdin.flush()
      await said('released')
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
      await proc.exited
    },
  }
}
