// Child process of scenario 9: another process holding the service's database write lock, as an
// operator's shell or a backup tool would. Opens the SQLite file with bun:sqlite (never creates it),
// takes the write lock with BEGIN IMMEDIATE (waiting up to 10 s for the service to let go of it),
// prints `BENCH_READY {"waitMs":...}`, holds the lock for <holdMs>, then ROLLBACK and exits.
// Exits at once when its stdin closes (the orchestrator is gone), and after holdMs + 30 s whatever
// happens; the lock dies with the process.
//   bun lock-holder.ts <database file> <holdMs>
import { Database } from 'bun:sqlite'
import { boundLifetime } from './lib/child'

const [path, holdArg] = process.argv.slice(2)
const holdMs = Math.min(60_000, Math.max(100, Number(holdArg) || 10_000))
if (!path) {
  console.error('usage: bun lock-holder.ts <database file> <holdMs>')
  process.exit(2)
}
boundLifetime('lock-holder.ts', holdMs + 30_000)

const db = new Database(path, { readwrite: true, create: false })
db.exec('PRAGMA busy_timeout = 10000')
const started = performance.now()
db.exec('BEGIN IMMEDIATE')
console.log(`BENCH_READY ${JSON.stringify({ waitMs: performance.now() - started, pid: process.pid })}`)
await Bun.sleep(holdMs)
db.exec('ROLLBACK')
db.close()
process.exit(0)
