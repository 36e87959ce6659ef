// `alttext audit --review --queue` and `--apply --from-queue` against the real service with the fake
// model: the queue holds exactly the CSV's rows (same places, roots and fingerprints, images uploaded,
// nothing charged again); reviewers decide in the API; --from-queue writes the accepted and edited ones
// with the CSV's checks, refusing the one whose file changed since and the rejected one not fetched.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseCsv } from '../../src/cli/shared/csv'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { attr, audit, MODEL, REPLIES, siteCopy } from './audit-support'

let env: AltTextEnv
let client: Record<string, string>

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: MODEL })
  client = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
})
afterAll(() => env.stop())

type Listed = {
  id: string
  status: string
  proposed_alt: string
  current_alt: string | null
  target: { kind: string; ref: string; site: string; fingerprint: string }
  image: { thumbnail_url: string | null }
}

const pending = async (): Promise<Listed[]> => {
  const res = await env.service.api.get('/api/suggestions?status=pending&target_kind=file&limit=100', env.key)
  expect(res.status).toBe(200)
  return res.body.suggestions
}
const usage = async (): Promise<number> => (await env.service.api.get('/api/usage', env.key)).body.credits.used

describe('--review --queue, then --apply --from-queue', () => {
  test('the queue holds the CSV rows; accepted and edited ones are written, a stale one is refused', async () => {
    const copy = siteCopy()
    try {
      const inputs = ['site/index.html', 'site/blog/post.html', '--root', 'site', '-q', '-o', 'r.html']
      const csv = await audit([...inputs, '--review', 'review.csv'], client, copy.dir)
      expect(csv.code).toBe(0)
      const [header, ...rows] = parseCsv(readFileSync(join(copy.dir, 'review.csv'), 'utf8'))
      const col = (row: string[], name: string) => row[header!.indexOf(name)]!
      const expected = rows
        .map((row) => ({
          ref: `${col(row, 'file')}:${col(row, 'line')}:${col(row, 'column')}`,
          site: col(row, 'root'),
          fingerprint: col(row, 'fingerprint'),
          proposed: col(row, 'proposed_alt'),
        }))
        .filter((row) => row.proposed !== '')
      expect(expected.length).toBeGreaterThan(2)
      const spent = await usage()
      expect(spent).toBeGreaterThan(0)

      // Cached answers and proposals given: the queue costs nothing more.
      const queued = await audit([...inputs, '--review', '--queue'], client, copy.dir)
      expect(queued.stderr).not.toContain('not queued')
      expect(queued.code).toBe(0)
      expect(queued.stdout).toContain(`queued: ${expected.length} suggestions for review at ${env.service.url}/console/#/review`)
      expect(await usage()).toBe(spent)

      const listed = await pending()
      expect(
        listed
          .map((s) => ({ ref: s.target.ref, site: s.target.site, fingerprint: s.target.fingerprint, proposed: s.proposed_alt }))
          .sort((a, b) => (a.ref < b.ref ? -1 : 1)),
      ).toEqual(expected.sort((a, b) => (a.ref < b.ref ? -1 : 1)))
      for (const s of listed) {
        expect(s.target.kind).toBe('file')
        // Local files are uploaded: the service made a thumbnail of each.
        expect(s.image.thumbnail_url).not.toBeNull()
      }
      const byRef = new Map(listed.map((s) => [s.target.ref, s]))
      const kite = byRef.get('site/index.html:16:5')!
      expect(kite.current_alt).toBe('IMG_2041.JPG')
      expect(kite.proposed_alt).toBe(REPLIES[320]!)
      const photo = byRef.get('site/blog/post.html:8:1')!
      const team = byRef.get('site/index.html:19:3')!

      // A reviewer: one edited, one rejected, the rest accepted.
      expect((await env.service.api.post(`/api/suggestions/${kite.id}/accept`, { alt_text: 'A red kite rises over the beach.' }, env.key)).status).toBe(200)
      expect((await env.service.api.post(`/api/suggestions/${team.id}/reject`, { reason: 'not this one' }, env.key)).status).toBe(200)
      const rest = listed.filter((s) => s !== kite && s !== team).map((s) => s.id)
      expect((await env.service.api.post('/api/suggestions/accept', { ids: rest }, env.key)).body.accepted).toHaveLength(rest.length)

      // Someone edits the post meanwhile: that image is not what was reviewed any more.
      const post = join(copy.site, 'blog', 'post.html')
      writeFileSync(post, readFileSync(post, 'utf8').replace('alt="photo"', 'alt="picture"'))
      const index = readFileSync(join(copy.site, 'index.html'), 'utf8')

      const applied = await audit(['--apply', '--from-queue', 'site', '--in-place'], client, copy.dir)
      expect(applied.code).toBe(1)
      expect(applied.stdout).toContain(`suggestion ${photo.id}: site/blog/post.html:8:1: refused: the image there changed since the review (now alt "picture"`)
      expect(applied.stdout).toContain(`suggestion ${kite.id}: site/index.html:16:5: written`)
      expect(applied.stdout).not.toContain(team.id)
      expect(applied.stdout).toContain(`${listed.length - 1} decided suggestions of site in the review queue`)
      expect(applied.stdout).toContain(`${listed.length - 2} suggestions written to 2 files in place, 1 refused`)

      const fixed = readFileSync(join(copy.site, 'index.html'), 'utf8')
      expect(fixed).toContain(`<img src="img/kite.jpg" alt=${attr('A red kite rises over the beach.')} width="320">`)
      // The rejected one is left as it was.
      expect(fixed).toContain('<img src="img/team.jpg" loading=lazy>')
      expect(fixed).not.toBe(index)
      expect(readFileSync(post, 'utf8')).toContain('alt="picture"')

      // Another root's suggestions are not this one's.
      const elsewhere = await audit(['--apply', '--from-queue', 'other', '--in-place'], client, copy.dir)
      expect(elsewhere.code).toBe(0)
      expect(elsewhere.stdout).toContain('0 decided suggestions of other in the review queue')
    } finally {
      copy.cleanup()
    }
  })

  test('usage: --queue goes with --review, --from-queue needs a root, neither takes a file name', async () => {
    const cases: [string[], string][] = [
      [['site', '--queue'], '--queue goes with --review'],
      [['site', '--review', 'x.csv', '--queue'], 'give no file name'],
      [['--apply', '--from-queue', '--in-place'], 'needs the root the audit ran on'],
      [['--apply', '--from-queue', 'site'], 'needs either --fix OUTDIR'],
      [['site', '--review', '--queue', '--fix', 'out'], 'cannot go with --fix'],
    ]
    for (const [args, message] of cases) {
      const res = await audit(args, client)
      expect(res.code).toBe(2)
      expect(res.stderr).toContain(message)
    }
  })
})
