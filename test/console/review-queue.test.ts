// The review queue in the console, in Chromium, against the service's suggestions: keyboard only
// (a accept, e edit with Enter saving, r reject with a reason, j/k next/previous, u undo), the filters,
// "accept all shown" behind a confirm dialog, decisions kept by the service (a reload, a second browser),
// two reviewers on one suggestion (already_decided in words), authors read-only (never a 403), the
// thumbnail's neutral alt, 320 px and axe-core in both schemes.
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { type ConsoleEnv, consoleForFile, findingsInBothSchemes, newContext, openPage, signInContext, watchPageProblems } from '../support/console'
import { makePng } from '../support/images'
import type { RegisteredAccount } from '../support/service'

let env: ConsoleEnv
let owner: RegisteredAccount
let reviewer: RegisteredAccount
let author: RegisteredAccount
let orgId: string
/** A key of the organisation, made by its owner: it submits the suggestions. */
let orgKey: string

const invitationToken = async (email: string) => {
  const mail = await env.smtp.waitForMail((m) => m.to.includes(email), 10_000)
  const token = /invitation\?token=([\w-]+)/.exec(mail.text)?.[1]
  if (!token) throw new Error(`no invitation link in the mail: ${mail.text}`)
  return token
}

/** Invites `account` with `role` and accepts with its own key. */
async function join(account: RegisteredAccount, role: string): Promise<void> {
  const invited = await env.service.api.post(`/api/orgs/${orgId}/invitations`, { email: account.email, role }, orgKey)
  expect(invited.status).toBe(201)
  const accepted = await env.service.api.post('/api/invitations/accept', { token: await invitationToken(account.email) }, account.apiKey)
  expect(accepted.status).toBe(200)
}

const run = consoleForFile('test/console/review-queue.test.ts', { rateLimits: false, account: true }, async (started) => {
  ;({ env, account: owner } = started)
  const org = await env.service.api.post('/api/orgs', { name: 'Queue Org' }, owner.apiKey)
  expect(org.status).toBe(201)
  orgId = org.body.id
  const key = await env.service.api.post('/api/keys', { label: 'queue', org_id: orgId }, owner.apiKey)
  expect(key.status).toBe(201)
  orgKey = key.body.api_key
  reviewer = await env.service.api.register()
  author = await env.service.api.register()
  await join(reviewer, 'reviewer')
  await join(author, 'author')
})

let seeded = 0
/**
 * Submits `count` pending suggestions of target kind `kind` (oldest first, so the queue, newest first,
 * shows the last one on top); their ids, newest first as the queue lists them.
 */
async function seed(kind: string, count: number, extra: Record<string, unknown> = {}): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const n = ++seeded
    const created = await env.service.api.post(
      '/api/suggestions',
      {
        image_url: env.images.route(`/queue-${n}.png`, { kind: 'bytes', body: makePng(40 + (n % 50), 30) }),
        target: { kind, ref: `media/${n}`, site: 'https://site.example' },
        current_alt: n % 2 ? `IMG_${n}.png` : undefined,
        proposed_alt: `Proposed text ${n}`,
        language: 'en',
        ...extra,
      },
      orgKey,
    )
    expect(created.status).toBe(201)
    ids.unshift(created.body.id)
  }
  return ids
}

const suggestion = async (id: string) => (await env.service.api.get(`/api/suggestions/${id}`, orgKey)).body

/** A page of `account` acting in the organisation (as its switcher would have remembered). */
async function inOrg(account: RegisteredAccount, width = 1280): Promise<Page> {
  const context = await newContext(env, { width, scheme: 'light' })
  context.setDefaultTimeout(10_000)
  await signInContext(context, env, account)
  await context.addInitScript(([email, id]) => (globalThis as any).localStorage.setItem(`alttext-org:${email}`, id), [account.email, orgId] as [string, string])
  return context.newPage()
}

/** The id (of the suggestion) whose card has the focus, or what else has it. */
const focusedCard = (page: Page) =>
  page.evaluate(() => {
    const active = (globalThis as any).document.activeElement
    return active?.id?.startsWith('suggestion-') ? active.id.slice('suggestion-'.length) : `${active?.tagName}#${active?.id}`
  })

const said = (page: Page, text: string) => page.locator('main p[role=status]', { hasText: text }).waitFor()
const cards = (page: Page) => page.locator('li.suggestion')

describe.if(run)('the review queue', () => {
  test('by keyboard alone: j/k move, a accepts, e edits (Enter saves), r rejects with a reason, u undoes; each announced', async () => {
    const ids = await seed('kb', 4)
    const page = await inOrg(reviewer)
    const problems = watchPageProblems(page)
    try {
      await openPage(page, '/review?target_kind=kb')
      expect(await cards(page).count()).toBe(4)
      await page.locator('main h1').focus()
      await page.keyboard.press('j')
      expect(await focusedCard(page)).toBe(ids[1]!)
      await page.keyboard.press('k')
      expect(await focusedCard(page)).toBe(ids[0]!)

      await page.keyboard.press('a')
      await said(page, 'Suggestion 1: accepted.')
      // The next pending suggestion takes the focus.
      await page.waitForFunction((id) => (globalThis as any).document.activeElement?.id === `suggestion-${id}`, ids[1])

      await page.keyboard.press('e')
      const field = page.getByLabel('Alt text for suggestion 2')
      await page.waitForFunction(() => (globalThis as any).document.activeElement?.tagName === 'TEXTAREA')
      expect(await field.inputValue()).toBe((await suggestion(ids[1]!)).proposed_alt)
      await page.keyboard.press('Control+A')
      await page.keyboard.type('A red kite over the dunes')
      await page.keyboard.press('Enter')
      await said(page, 'Suggestion 2: accepted with your edit.')

      await page.keyboard.press('r')
      await page.waitForFunction(() => (globalThis as any).document.activeElement?.tagName === 'INPUT')
      await page.keyboard.type('Not the right image')
      await page.keyboard.press('Enter')
      await said(page, 'Suggestion 3: rejected.')

      // u reopens the last decision: the rejection.
      await page.keyboard.press('u')
      await said(page, 'Suggestion 3: back to pending.')
      expect(await focusedCard(page)).toBe(ids[2]!)

      const [first, second, third, fourth] = await Promise.all(ids.map(suggestion))
      expect([first.status, first.final_alt, first.decided_by]).toEqual(['accepted', first.proposed_alt, reviewer.email])
      expect([second.status, second.final_alt]).toEqual(['edited', 'A red kite over the dunes'])
      expect([third.status, third.reason]).toEqual(['pending', null])
      expect(fourth.status).toBe('pending')
      // Escape leaves the editor without a decision, the focus back on the card.
      await page.keyboard.press('e')
      await page.waitForFunction(() => (globalThis as any).document.activeElement?.tagName === 'TEXTAREA')
      await page.keyboard.press('Escape')
      expect(await focusedCard(page)).toBe(ids[2]!)
      expect((await suggestion(ids[2]!)).status).toBe('pending')
      expect(problems).toEqual([])
    } finally {
      await page.context().close()
    }
  }, 60_000)

  test('decisions are the service’s: a reload, a second browser and another reviewer see them', async () => {
    const ids = await seed('persist', 2)
    const page = await inOrg(reviewer)
    const second = await inOrg(owner)
    try {
      await openPage(page, '/review?target_kind=persist')
      await page.getByRole('button', { name: 'Accept suggestion 1' }).click()
      await said(page, 'Suggestion 1: accepted.')
      // Pending (the default filter): after a reload only the other one is left.
      await page.reload()
      await page.locator('main h1').waitFor()
      await page.waitForSelector('main [aria-busy="true"]', { state: 'detached' })
      expect(await cards(page).count()).toBe(1)
      expect(await page.locator(`#suggestion-${ids[1]}`).count()).toBe(1)

      await openPage(second, '/review?target_kind=persist&status=accepted')
      const card = second.locator(`#suggestion-${ids[0]}`)
      await card.waitFor()
      expect(await card.locator('.decision').textContent()).toContain(`by ${reviewer.email}`)
    } finally {
      await page.context().close()
      await second.context().close()
    }
  }, 60_000)

  test('two reviewers on one suggestion: the second is told someone else decided it meanwhile, and sees that decision', async () => {
    const [id] = await seed('race', 1)
    const first = await inOrg(reviewer)
    const late = await inOrg(owner)
    try {
      await openPage(first, '/review?target_kind=race')
      await openPage(late, '/review?target_kind=race')
      await first.getByRole('button', { name: 'Reject suggestion 1' }).click()
      await first.getByLabel('Why reject suggestion 1? (optional)').fill('Wrong picture')
      await first.keyboard.press('Enter')
      await said(first, 'Suggestion 1: rejected.')

      await late.locator(`#suggestion-${id}`).focus()
      await late.keyboard.press('a')
      await late.locator('main [role=alert]', { hasText: 'Someone else decided this meanwhile' }).waitFor()
      const card = late.locator(`#suggestion-${id}`)
      await card.locator('.decision', { hasText: `Rejected by ${reviewer.email}` }).waitFor()
      expect(await card.locator('.decision').textContent()).toContain('Wrong picture')
      expect((await suggestion(id!)).status).toBe('rejected')
    } finally {
      await first.context().close()
      await late.context().close()
    }
  }, 60_000)

  test('filters: status, target kind, language and mine are the list’s query; paging with "Show more"', async () => {
    await seed('filter-a', 2)
    await seed('filter-b', 1, { language: 'de' })
    const paged = await seed('filter-page', 27)
    const page = await inOrg(reviewer)
    try {
      await openPage(page, '/review')
      await page.fill('#filter-kind', 'filter-b')
      await page.click('main button:has-text("Apply the filters")')
      await said(page, '1 suggestion shown.')
      expect(new URL(page.url()).search).toBe('?target_kind=filter-b')

      await openPage(page, '/review?language=de&target_kind=filter-a')
      expect(await cards(page).count()).toBe(0)
      await openPage(page, '/review?language=de')
      expect(await cards(page).count()).toBeGreaterThanOrEqual(1)
      // The reviewer submitted none of them: "mine" shows nothing.
      await openPage(page, '/review?mine=true')
      expect(await cards(page).count()).toBe(0)
      expect(await page.isChecked('input[name=mine]')).toBe(true)

      await openPage(page, '/review?target_kind=filter-page')
      expect(await cards(page).count()).toBe(25)
      await page.click('main button:has-text("Show more")')
      await page.locator('li.suggestion >> nth=26').waitFor()
      expect(await cards(page).count()).toBe(27)
      expect(await page.locator('main button:has-text("Show more")').count()).toBe(0)
      expect(await focusedCard(page)).toBe(paged[25]!)
    } finally {
      await page.context().close()
    }
  }, 90_000)

  test('"accept all shown" counts them, asks first, and accepts exactly those; u reopens them', async () => {
    const ids = await seed('bulk', 3)
    const page = await inOrg(reviewer)
    try {
      await openPage(page, '/review?target_kind=bulk')
      await page.click('main button:has-text("Accept all 3 shown")')
      const dialog = page.locator('dialog[open]', { hasText: 'Accept 3 suggestions?' })
      await dialog.waitFor()
      // Cancel decides nothing.
      await dialog.locator('button:has-text("Cancel")').click()
      expect((await Promise.all(ids.map(suggestion))).map((s) => s.status)).toEqual(['pending', 'pending', 'pending'])
      await page.click('main button:has-text("Accept all 3 shown")')
      await page.click('dialog[open] button:has-text("Accept 3")')
      await said(page, 'Accepted 3 suggestions.')
      expect((await Promise.all(ids.map(suggestion))).map((s) => s.status)).toEqual(['accepted', 'accepted', 'accepted'])
      expect(await cards(page).count()).toBe(0)
      await page.locator('main h1').focus()
      await page.keyboard.press('u')
      await said(page, '3 suggestions back to pending.')
      expect((await Promise.all(ids.map(suggestion))).map((s) => s.status)).toEqual(['pending', 'pending', 'pending'])
    } finally {
      await page.context().close()
    }
  }, 60_000)

  test('an author sees the queue read-only: no decision buttons, keys decide nothing, never a 403', async () => {
    const [id] = await seed('authors', 1)
    const page = await inOrg(author)
    const refused: string[] = []
    page.on('response', (response) => {
      if (response.status() === 403) refused.push(response.url())
    })
    try {
      await openPage(page, '/review?target_kind=authors')
      expect(await cards(page).count()).toBe(1)
      expect(await page.locator('main button:has-text("Accept")').count()).toBe(0)
      expect(await page.locator('main .intro').textContent()).toContain('you see the queue, reviewers decide')
      await page.locator(`#suggestion-${id}`).focus()
      await page.keyboard.press('a')
      await page.keyboard.press('r')
      await page.keyboard.press('u')
      expect((await suggestion(id!)).status).toBe('pending')
      expect(refused).toEqual([])
    } finally {
      await page.context().close()
    }
  }, 30_000)

  test('each card: the thumbnail with a neutral alt, the target, current and proposed side by side, WCAG issues', async () => {
    const [id] = await seed('card', 1, { current_alt: 'IMG_0042.jpg' })
    const page = await inOrg(reviewer)
    try {
      await openPage(page, '/review?target_kind=card')
      const card = page.locator(`#suggestion-${id}`)
      const image = card.locator('.thumb img')
      await image.waitFor()
      // Not the proposed text (a screen reader would hear it twice, as if it were right), not a file name.
      const alt = await image.getAttribute('alt')
      expect(alt).toStartWith('The image under review')
      expect(alt).not.toContain('Proposed text')
      expect(await image.evaluate((img: any) => img.naturalWidth > 0)).toBe(true)
      expect(await card.locator('.compare').textContent()).toContain('IMG_0042.jpg')
      expect(await card.locator('.target').textContent()).toContain('card: media/')
      expect(await card.getAttribute('aria-labelledby')).toBe(`suggestion-${id}-h`)
    } finally {
      await page.context().close()
    }
  }, 30_000)

  for (const width of [1280, 320])
    test(`at ${width} px: nothing scrolls sideways; axe-core finds nothing in the queue, the editor and the dialog, light and dark`, async () => {
      await seed(`axe-${width}`, 2, {
        current_alt: 'A very long current alt text that goes on and on to see whether it wraps inside the card at 320 pixels wide',
      })
      const page = await inOrg(reviewer, width)
      try {
        const found: Record<string, unknown> = {}
        const check = async (name: string, show: () => Promise<void>) => {
          for (const [scheme, findings] of Object.entries(await findingsInBothSchemes(page, show))) found[`${name}, ${scheme}`] = findings
        }
        await check('queue', async () => {
          await openPage(page, `/review?target_kind=axe-${width}`)
          await page.locator('li.suggestion .thumb img').first().waitFor()
          await page.click('.shortcuts summary')
        })
        await check('editor', async () => {
          await openPage(page, `/review?target_kind=axe-${width}`)
          await page.getByRole('button', { name: 'Edit suggestion 1' }).click()
          await page.getByLabel('Alt text for suggestion 1').waitFor()
        })
        await check('dialog', async () => {
          await openPage(page, `/review?target_kind=axe-${width}`)
          await page.click('main button:has-text("Accept all 2 shown")')
          await page.locator('dialog[open]').waitFor()
        })
        const author_ = await inOrg(author, width)
        for (const [scheme, findings] of Object.entries(await findingsInBothSchemes(author_, () => openPage(author_, `/review?target_kind=axe-${width}`))))
          found[`author, ${scheme}`] = findings
        await author_.context().close()
        expect(found).toEqual({})
      } finally {
        await page.context().close()
      }
    }, 90_000)
})
