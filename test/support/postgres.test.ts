// The PostgreSQL test harness itself: a cluster starts from the Debian packages on loopback, each
// database made from the template holds what the template was given and is independent of the others,
// and stopping ends the server and removes its folder. Under CI=true PostgreSQL must be there.
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { postgresUnavailable, startPostgresCluster } from './postgres'

const unavailable = postgresUnavailable()
const ci = process.env.CI === 'true'
if (unavailable && !ci) console.warn(`[postgres harness] SKIPPED: ${unavailable}`)

describe.skipIf(unavailable !== null && !ci)('the PostgreSQL test harness', () => {
  test('starts a cluster, copies the template per database, and stops it', async () => {
    expect(unavailable).toBeNull()
    const cluster = await startPostgresCluster(async (url) => {
      const sql = new SQL(url, { max: 1 })
      await sql`CREATE TABLE marks (name TEXT PRIMARY KEY)`
      await sql`INSERT INTO marks VALUES ('from the template')`
      await sql.close()
    })
    console.info(`[postgres harness] cluster answered ${cluster.startedInMs} ms after initdb began`)
    try {
      const [a, b] = [await cluster.createDatabase(), await cluster.createDatabase()]
      expect(a).not.toBe(b)
      const sqlA = new SQL(a, { max: 1 })
      const sqlB = new SQL(b, { max: 1 })
      try {
        expect(await sqlA`SELECT name FROM marks`).toEqual([{ name: 'from the template' }])
        await sqlA`INSERT INTO marks VALUES ('only in a')`
        expect((await sqlB`SELECT name FROM marks`).map((r: { name: string }) => r.name)).toEqual(['from the template'])
        // Only loopback: the server listens on 127.0.0.1 alone.
        expect((await sqlA`SELECT inet_server_addr()::text AS addr`)[0].addr).toBe('127.0.0.1/32')
      } finally {
        await sqlA.close()
        await sqlB.close()
      }
      await cluster.dropDatabase(b)
      const left = new SQL(cluster.url('postgres'), { max: 1 })
      try {
        const names = (await left`SELECT datname FROM pg_database`).map((r: { datname: string }) => r.datname)
        expect(names).toContain(new URL(a).pathname.slice(1))
        expect(names).not.toContain(new URL(b).pathname.slice(1))
      } finally {
        await left.close()
      }
    } finally {
      await cluster.stop()
    }
    const after = new SQL(cluster.url('postgres'), { max: 1, connectionTimeout: 2 })
    await expect(after`SELECT 1`).rejects.toThrow()
    await after.close()
  }, 60_000)
})

describe.skipIf(unavailable !== null && !ci)('the harness on a PATH without the sbin folders', () => {
  // Test runners and CI images often give a PATH of /usr/bin:/bin: runuser (util-linux, /usr/sbin) must still be found as root.
  test('starts and stops a cluster', async () => {
    const script = `import { startPostgresCluster } from ${JSON.stringify(`${import.meta.dir}/postgres.ts`)}
const cluster = await startPostgresCluster()
await cluster.createDatabase()
await cluster.stop()
console.log('cluster ok')`
    const proc = Bun.spawn([process.execPath, '-e', script], { env: { PATH: '/usr/bin:/bin', HOME: process.env.HOME ?? '/' }, stdout: 'pipe', stderr: 'pipe' })
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    expect({ code, out: out.trim(), err: code === 0 ? '' : err }).toEqual({ code: 0, out: 'cluster ok', err: '' })
  }, 60_000)
})
