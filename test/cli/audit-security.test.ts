// `alttext audit` and hostile or careless input: a crawl never leaves its origin or the page limit, page
// text cannot inject markup into the report, spreadsheets do not run CSV cells, the key is never
// printed or written, --fix writes nowhere but OUTDIR, and --apply writes only inside the audited root,
// never through a symbolic link.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { imageFingerprint } from '../../src/cli/audit/review'
import { csvField } from '../../src/cli/shared/csv'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { makeJpeg, makePng } from '../support/images'
import { audit, MODEL, pageServer, REPLIES, readJson, recordingProxy, siteCopy } from './audit-support'
import { FILTER_SCRIPT } from '../../src/cli/audit/evidence/report-filter'

let env: AltTextEnv
let client: Record<string, string>

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: MODEL })
  client = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

describe('crawling', () => {
  test('links to another origin are never fetched, whatever the depth; --max-pages caps what crawling adds', async () => {
    const other = pageServer({ '/': '<html><p>other origin</p></html>' })
    const chain: Record<string, string> = {}
    for (let i = 0; i < 10; i++)
      chain[`/p${i}.html`] =
        `<html><a href="/p${i + 1}.html">next</a><a href="${other.url}/">away</a><a href="//${new URL(other.url).host}/">away too</a></html>`
    const site = pageServer({
      '/': `<html><a href="${other.url}/">other</a><a href="/p0.html">chain</a><a href="mailto:a@example.org">mail</a><a href="/photo.jpg">photo</a></html>`,
      ...chain,
    })
    const copy = siteCopy()
    try {
      const res = await audit([`${site.url}/`, '--crawl', '20', '--max-pages', '5', '--dry-run', '--json', 'r.json', '-o', 'r.html'], {}, copy.dir)
      expect(res.code).toBe(0)
      expect(other.total()).toBe(0)
      expect(site.hits('/photo.jpg')).toBe(0)
      const pages = readJson(join(copy.dir, 'r.json')).pages.map((p: any) => new URL(p.page).pathname)
      expect(pages).toEqual(['/', '/p0.html', '/p1.html', '/p2.html', '/p3.html'])
      expect(res.stderr).toContain('; 1 link not followed (--max-pages)')
    } finally {
      other.stop()
      site.stop()
      copy.cleanup()
    }
  })
})

describe('local images stay inside the site root', () => {
  test('encoded ../, plain ../ and symbolic links out of the root are refused and said so; nothing outside is read or sent', async () => {
    const copy = siteCopy()
    const proxy = recordingProxy(env.service.url)
    try {
      // A picture beside the site, not in it: no src on a page of the site may send it.
      const secret = makePng(123, 45)
      mkdirSync(join(copy.dir, 'secret'))
      writeFileSync(join(copy.dir, 'secret', 'secret.png'), secret)
      symlinkSync(join(copy.dir, 'secret', 'secret.png'), join(copy.site, 'img', 'linked.png'))
      symlinkSync(join(copy.dir, 'secret'), join(copy.site, 'shared'))
      // A link that stays inside the root is followed.
      symlinkSync(join(copy.site, 'img', 'kite.jpg'), join(copy.site, 'img', 'alias.jpg'))
      const up = '%2e%2e%2f'.repeat(12)
      writeFileSync(
        join(copy.site, 'leak.html'),
        [
          '<html lang="en"><body>',
          '<img src="/%2e%2e%2f%2e%2e%2fetc%2fpasswd">',
          `<img src="/${up}etc%2fpasswd">`,
          '<img src="/%2e%2e%2fsecret%2fsecret.png">',
          '<img src="..%2Fsecret%2Fsecret.png">',
          '<img src="../../../secret/secret.png">',
          '<img src="img/linked.png">',
          '<img src="/shared/secret.png">',
          '<img src="img/alias.jpg">',
          '</body></html>',
        ].join('\n'),
      )
      const res = await audit(['site/leak.html', '--json', 'r.json', '-o', 'r.html'], { ALTTEXT_URL: proxy.url, ALTTEXT_API_KEY: env.key }, copy.dir)
      expect(res.code).toBe(1)

      expect(proxy.sent(secret)).toBe(false)
      expect(proxy.sent(readFileSync('/etc/passwd').subarray(0, 64))).toBe(false)
      expect(env.ollama.requests.flatMap((r) => r.images).some((image) => image.width === 123)).toBe(false)

      const images = readJson(join(copy.dir, 'r.json')).pages[0].images
      const refused = (index: number) => images[index].error as string | null
      for (const index of [0, 1, 2, 3]) {
        expect(refused(index)).toMatch(/outside the site root/)
        expect(images[index].suggestion).toBeNull()
      }
      // The URL's own dot segments stop at the root: this one names a file in the site, which is not there (not checked, not sent).
      expect(images[4].not_checked).toMatch(/does not exist$/)
      expect(images[4].suggestion).toBeNull()
      for (const index of [5, 6]) {
        expect(refused(index)).toMatch(/symbolic link .*outside the site root/)
        expect(images[index].suggestion).toBeNull()
      }
      expect(images[7]).toMatchObject({ error: null, suggestion: { alt: REPLIES[320] } })
      // The report says why, where a person reads it.
      expect(readFileSync(join(copy.dir, 'r.html'), 'utf8')).toContain('outside the site root')
    } finally {
      proxy.stop()
      copy.cleanup()
    }
  }, 30_000)
})

describe('hostile pages', () => {
  test('page text and attributes are escaped in the HTML report; CSV cells cannot start a formula', async () => {
    const photo = env.serve(makeJpeg(320, 240, 70))
    const pages = pageServer({
      '/': [
        '<html><title></title><script>alert(1)</script></title>',
        `<img src="${photo}" alt="&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;">`,
        `<img src="${photo}" alt="=HYPERLINK(&quot;http://evil.example/&quot;,&quot;x&quot;)">`,
        '<img src="javascript:alert(3)">',
        '<img src="x.png&quot; onerror=&quot;alert(4)" alt="+cmd">',
      ].join(''),
    })
    const copy = siteCopy()
    try {
      const res = await audit([`${pages.url}/`, '--csv', 'r.csv', '-o', 'r.html'], client, copy.dir)
      const html = readFileSync(join(copy.dir, 'r.html'), 'utf8')
      // The one script is the report's own filter, after the content: nothing of the page runs.
      expect(html.match(/<script/gu)).toHaveLength(1)
      expect(html).toContain(`</main>\n${FILTER_SCRIPT}\n</body>`)
      expect(html).not.toMatch(/onerror="/)
      expect(html).not.toContain('href="javascript:')
      expect(html).not.toContain('src="javascript:')
      expect(html).toContain('&lt;script&gt;alert(2)&lt;/script&gt;')
      const csv = readFileSync(join(copy.dir, 'r.csv'), 'utf8')
      expect(csv).toContain(`"'=HYPERLINK(""http://evil.example/"",""x"")"`)
      expect(csv).toContain(",'+cmd,")
      expect(csv).not.toMatch(/,=HYPERLINK/)
      // The javascript: image cannot be sent: a failure in the report, not a request.
      expect(res.code).toBe(1)
      expect(csv).toContain('cannot send a javascript: image')
    } finally {
      pages.stop()
      copy.cleanup()
    }
  }, 30_000)

  test('the API key appears in no output and no report', async () => {
    const copy = siteCopy()
    try {
      const res = await audit(['site', '--json', 'r.json', '--csv', 'r.csv', '-o', 'r.html', '--fix', 'fixed'], client, copy.dir)
      expect(res.code).toBe(0)
      expect(res.stdout + res.stderr).not.toContain(env.key)
      for (const file of ['r.json', 'r.csv', 'r.html']) expect(readFileSync(join(copy.dir, file), 'utf8')).not.toContain(env.key)
    } finally {
      copy.cleanup()
    }
  }, 30_000)

  test('--fix never writes through a symbolic link planted in OUTDIR: the page says why, the target is untouched', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(join(copy.dir, 'victim.html'), 'victim')
      mkdirSync(join(copy.dir, 'out', 'blog'), { recursive: true })
      symlinkSync(join(copy.dir, 'victim.html'), join(copy.dir, 'out', 'about.html'))
      const res = await audit(
        ['site/about.html', 'site/blog/post.html', '--root', 'site', '--dry-run', '--fix', 'out', '--json', 'r.json', '-o', 'r.html'],
        {},
        copy.dir,
      )
      expect(res.code).toBe(1)
      const errors = readJson(join(copy.dir, 'r.json')).pages.map((page: any) => page.error)
      expect(errors).toEqual(['cannot write its copy: out/about.html is a symbolic link: not followed', null])
      expect(readFileSync(join(copy.dir, 'victim.html'), 'utf8')).toBe('victim')
      expect(readFileSync(join(copy.dir, 'out', 'blog', 'post.html'), 'utf8')).toBe(readFileSync(join(copy.site, 'blog', 'post.html'), 'utf8'))
    } finally {
      copy.cleanup()
    }
  })

  test('--fix writes under OUTDIR only, even for page URLs with dot segments', async () => {
    const pages = pageServer({ '/a/b.html': '<html><p>x</p></html>', '/escape.html': '<html><p>x</p></html>' })
    const copy = siteCopy()
    try {
      const res = await audit(
        [`${pages.url}/a/%2e%2e/%2e%2e/escape.html`, `${pages.url}/a/..%2fb.html`, '--dry-run', '--fix', 'out/fixed', '-o', 'out/r.html'],
        {},
        copy.dir,
      )
      const outside = readdirSync(copy.dir).sort()
      expect(outside).toEqual(['out', 'site'])
      expect(readdirSync(join(copy.dir, 'out')).sort()).toEqual(['fixed', 'r.html'])
      expect([0, 1]).toContain(res.code)
    } finally {
      pages.stop()
      copy.cleanup()
    }
  })
})

/** A page whose one image (line 2, column 1) has no alt. */
const APPLY_PAGE = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>P</title></head><body>\n<img src="a.png">\n</body></html>\n'
const REVIEW_HEADER = 'file,document,line,column,image,finding,details,current_alt,proposed_alt,attribute,root,fingerprint'

/** A review CSV as `--review` writes it: one row per [file, root] for APPLY_PAGE's image, proposing `alt`. */
const reviewOf = (rows: [file: string, root: string][], alt = 'A red kite.') =>
  `${[
    REVIEW_HEADER,
    ...rows.map(([file, root]) =>
      [file, '', 2, 1, 'a.png', 'missing', 'no alt attribute', null, alt, 'alt', root, imageFingerprint({ textAttribute: 'alt', text: null, src: 'a.png' })]
        .map((field) => csvField(field))
        .join(','),
    ),
  ].join('\r\n')}\r\n`

const WRITTEN = APPLY_PAGE.replace('<img src="a.png">', '<img alt="A red kite." src="a.png">')

describe('--apply writes only inside the audited root', () => {
  test('rows naming ../ or an absolute path outside are refused, each with why; the other rows are written', async () => {
    const copy = siteCopy()
    try {
      const work = join(copy.dir, 'work')
      mkdirSync(join(work, 'site'), { recursive: true })
      writeFileSync(join(work, 'site', 'page.html'), APPLY_PAGE)
      const victim = join(copy.dir, 'victim.html')
      writeFileSync(victim, APPLY_PAGE)
      writeFileSync(
        join(work, 'review.csv'),
        reviewOf([
          ['site/page.html', 'site'],
          ['../victim.html', 'site'],
          ['../victim.html', '..'],
          [victim, '/'],
        ]),
      )
      const apply = await audit(['--apply', 'review.csv', '--in-place'], {}, work)
      expect(apply.code).toBe(1)
      expect(apply.stdout.split('\n').filter(Boolean)).toEqual([
        'row 2: site/page.html:2:1: written',
        `row 3: ${victim}:2:1: refused: ${victim} is outside its root site`,
        `row 4: ${victim}:2:1: refused: its root ${copy.dir} is outside the working directory: --apply writes only under the folder it runs in`,
        `row 5: ${victim}:2:1: refused: its root / is outside the working directory: --apply writes only under the folder it runs in`,
        '1 row written to 1 file in place, 3 refused',
      ])
      expect(readFileSync(join(work, 'site', 'page.html'), 'utf8')).toBe(WRITTEN)
      expect(readFileSync(victim, 'utf8')).toBe(APPLY_PAGE)
    } finally {
      copy.cleanup()
    }
  })

  test('symbolic links are not followed: a planted temporary file, a linked target, a linked folder, a link in --fix OUTDIR', async () => {
    const copy = siteCopy()
    try {
      const work = join(copy.dir, 'work')
      mkdirSync(join(work, 'site'), { recursive: true })
      mkdirSync(join(copy.dir, 'elsewhere'))
      const victims = ['temp-victim.html', 'link-victim.html', 'elsewhere/page.html', 'copy-victim.html'].map((name) => join(copy.dir, name))
      for (const victim of victims) writeFileSync(victim, APPLY_PAGE)
      writeFileSync(join(work, 'site', 'page.html'), APPLY_PAGE)
      symlinkSync(victims[1]!, join(work, 'site', 'link.html'))
      symlinkSync(join(copy.dir, 'elsewhere'), join(work, 'site', 'linked'))
      // An attacker who can write in the folder plants the temporary name an earlier version used
      // (".page.html.alttext-<pid>.tmp"), for every process id the command may get.
      const last = Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8'))
      for (let pid = last + 1; pid <= last + 2000; pid++) symlinkSync(victims[0]!, join(work, 'site', `.page.html.alttext-${pid}.tmp`))
      writeFileSync(
        join(work, 'review.csv'),
        reviewOf([
          ['site/page.html', 'site'],
          ['site/link.html', 'site'],
          ['site/linked/page.html', 'site'],
        ]),
      )
      const apply = await audit(['--apply', 'review.csv', '--in-place'], {}, work)
      expect(apply.code).toBe(1)
      expect(apply.stdout.split('\n').filter(Boolean)).toEqual([
        'row 2: site/page.html:2:1: written',
        'row 3: site/link.html:2:1: refused: site/link.html is a symbolic link: --apply does not follow it',
        'row 4: site/linked/page.html:2:1: refused: site/linked/page.html leads outside its root through a symbolic link',
        '1 row written to 1 file in place, 2 refused',
      ])
      expect(lstatSync(join(work, 'site', 'page.html')).isSymbolicLink()).toBe(false)
      expect(readFileSync(join(work, 'site', 'page.html'), 'utf8')).toBe(WRITTEN)

      // --fix OUTDIR: a link planted where the copy goes is refused, not written through.
      mkdirSync(join(work, 'out'))
      symlinkSync(victims[3]!, join(work, 'out', 'page.html'))
      writeFileSync(join(work, 'site', 'page.html'), APPLY_PAGE)
      writeFileSync(join(work, 'again.csv'), reviewOf([['site/page.html', 'site']]))
      const fix = await audit(['--apply', 'again.csv', '--fix', 'out'], {}, work)
      expect(fix.code).toBe(1)
      expect(fix.stdout).toContain('row 2: site/page.html:2:1: refused: cannot write out/page.html: out/page.html is a symbolic link: not followed')
      for (const victim of victims) expect(readFileSync(victim, 'utf8')).toBe(APPLY_PAGE)
      expect(existsSync(join(work, 'site', 'linked', 'page.html'))).toBe(true)
    } finally {
      copy.cleanup()
    }
  }, 30_000)
})
