// Scenario 6: grows the database the way months of use would, while the service is stopped (the
// binary has already run its migrations on this file): 10 000 accounts with 2 keys each (one revoked),
// their credit and call counters, and 100 000 cached alt texts. Password hashes are a dummy argon2id
// string and key hashes random: nobody signs in with these accounts, they only make the tables and
// indexes the size a busy installation has.
import { Database } from 'bun:sqlite'
import { randomBytes } from 'node:crypto'
import { statSync } from 'node:fs'

export type SeedResult = { accounts: number; keys: number; cacheRows: number; ms: number; dbBytes: number }

const DUMMY_HASH = '$argon2id$v=19$m=65536,t=2,p=1$YmVuY2hzZWVkc2FsdA$ZHVtbXloYXNoZHVtbXloYXNoZHVtbXloYXNoZHVtbXk'
const TEXTS = [
  'Sailing boats moored in a small harbour at sunset, with a lighthouse on the pier.',
  'A bar chart of monthly sales, rising from 20 to 45 units between January and June.',
  'Two children flying a red kite on a windy beach under a cloudy sky.',
  'Close-up of a bowl of ramen with a soft-boiled egg, spring onions and nori.',
]

export function seedDatabase(path: string, accounts = 10_000, cacheRows = 100_000, now = Date.now()): SeedResult {
  const started = performance.now()
  const db = new Database(path, { strict: true })
  let keys = 0
  try {
    db.exec('PRAGMA journal_mode = WAL')
    db.exec('PRAGMA foreign_keys = ON')
    const version = db.query<{ v: number | null }, []>('SELECT max(version) AS v FROM schema_migrations').get()?.v ?? 0
    if (version < 2) throw new Error(`database ${path} is at schema version ${version}; start the binary once first`)

    const prefixes = new Set(
      db
        .query<{ prefix: string }, []>('SELECT prefix FROM api_keys')
        .all()
        .map((r) => r.prefix),
    )
    const uniquePrefix = () => {
      for (;;) {
        const prefix = `alt_${randomBytes(4).toString('hex')}`
        if (!prefixes.has(prefix)) {
          prefixes.add(prefix)
          return prefix
        }
      }
    }
    const period = new Date(now).toISOString().slice(0, 7)
    const day = new Date(now).toISOString().slice(0, 10)
    const insertAccount = db.query<{ id: number }, [string, string, number]>(
      "INSERT INTO accounts (email, password_hash, plan, created_at) VALUES (?, ?, 'free', ?) RETURNING id",
    )
    const insertKey = db.query<null, [number, string, string, string, number, number | null, number]>(
      'INSERT INTO api_keys (account_id, prefix, key_hash, label, created_at, revoked_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    const insertUsage = db.query<null, [number, string, number]>('INSERT INTO credit_usage (account_id, period, used) VALUES (?, ?, ?)')
    const insertCalls = db.query<null, [number, string, number]>('INSERT INTO api_calls (account_id, day, count) VALUES (?, ?, ?)')
    const insertCache = db.query<null, [string, string, string, number, number, string, number, number]>(
      `INSERT INTO alt_text_cache (cache_key, alt_text, wcag_compliant, wcag_issues, language, model, width, height, format, created_at, expires_at)
       VALUES (?, ?, 1, '[]', ?, 'llava', ?, ?, ?, ?, ?)`,
    )
    db.transaction(() => {
      for (let i = 0; i < accounts; i++) {
        const created = now - ((i * 7919) % (180 * 86_400_000))
        const id = insertAccount.get(`seed-${i}@bench.invalid`, DUMMY_HASH, created)!.id
        insertKey.run(id, uniquePrefix(), randomBytes(32).toString('hex'), 'seed', created, created + 86_400_000, created)
        insertKey.run(id, uniquePrefix(), randomBytes(32).toString('hex'), 'seed', created + 86_400_000, null, now - (i % 86_400_000))
        keys += 2
        insertUsage.run(id, period, i % 50)
        insertCalls.run(id, day, i % 500)
      }
      const formats = ['jpeg', 'png', 'webp', 'gif']
      for (let i = 0; i < cacheRows; i++) {
        const created = now - ((i * 104_729) % (29 * 86_400_000))
        insertCache.run(
          randomBytes(32).toString('hex'),
          TEXTS[i % TEXTS.length]!,
          i % 7 === 0 ? 'de' : 'en',
          1024,
          683,
          formats[i % 4]!,
          created,
          created + 30 * 86_400_000,
        )
      }
    }).immediate()
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  } finally {
    db.close()
  }
  return { accounts, keys, cacheRows, ms: performance.now() - started, dbBytes: statSync(path).size }
}
