// Organisations in the console, in Chromium: the header's switcher (a new organisation, the choice kept
// over a reload, every API request naming it in X-Alttext-Org, the role shown), the Members page (invite
// by email, the mailed link accepted in a second browser, also after signing in there first; withdraw;
// role change; remove with a confirm dialog; leaving; last_owner in words), and axe-core on these pages.
import { describe, expect, test } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { type ConsoleEnv, consoleForFile, findingsInBothSchemes, newContext, openPage, signInContext, watchPageProblems } from '../support/console'
import type { RegisteredAccount } from '../support/service'

let env: ConsoleEnv
let owner: RegisteredAccount
const run = consoleForFile('test/console/teams.test.ts', { rateLimits: false, account: true }, (started) => {
  ;({ env, account: owner } = started)
})

/** A signed-in page of `account`, in a context of its own (closed with the page's context). */
async function signedIn(account: RegisteredAccount, width = 1280): Promise<Page> {
  const context = await newContext(env, { width, scheme: 'light' })
  context.setDefaultTimeout(10_000)
  await signInContext(context, env, account)
  return context.newPage()
}

/** The path of the invitation link mailed to `email` (made relative to the test's service). */
async function invitationPath(email: string): Promise<string> {
  const mail = await env.smtp.waitForMail((m) => m.to.includes(email), 10_000)
  const token = /invitation\?token=([\w-]+)/.exec(mail.text)?.[1]
  if (!token) throw new Error(`no invitation link in the mail: ${mail.text}`)
  return `/invitation?token=${token}`
}

const switcher = (page: Page) => page.locator('header .org-toggle')

/** Opens the switcher and creates an organisation there; the console lands on its Members page. */
async function createOrg(page: Page, name: string): Promise<void> {
  await switcher(page).click()
  await page.locator('.org-panel input[name=org_name]').fill(name)
  await page.locator('.org-panel button[type=submit]').click()
  await page.locator('main h1', { hasText: `Members of ${name}` }).waitFor()
}

async function invite(page: Page, email: string, role: string): Promise<void> {
  await page.fill('#invite_email', email)
  await page.selectOption('#invite_role', role)
  await page.click('main button:has-text("Send the invitation")')
  await page.locator('main p[role=status]', { hasText: `Invitation mailed to ${email}` }).waitFor()
}

/** Accepts an invitation in `page` (signed in as the invited person); resolves once the console works in it. */
async function accept(page: Page, path: string, name: string): Promise<void> {
  await openPage(page, path)
  await page.click('main button:has-text("Accept the invitation")')
  await page.locator('main .notice', { hasText: `You joined ${name}` }).waitFor()
}

const orgsOf = async (account: RegisteredAccount) => (await env.service.api.get('/api/orgs', account.apiKey)).body.orgs as { id: string; name: string }[]

describe.if(run)('organisations in the console', () => {
  test('the switcher: a new organisation becomes the one the console acts in, kept over a reload, named in every request', async () => {
    const page = await signedIn(owner)
    const problems = watchPageProblems(page)
    try {
      await openPage(page, '/')
      expect((await switcher(page).textContent())?.trim()).toBe('Organisation: Personal (owner)')
      await createOrg(page, 'Switcher Ltd')
      expect((await switcher(page).textContent())?.trim()).toBe('Organisation: Switcher Ltd (owner)')
      await page.locator('main .notice', { hasText: 'Created Switcher Ltd' }).waitFor()
      const org = (await orgsOf(owner)).find((each) => each.name === 'Switcher Ltd')
      expect(org).toBeDefined()

      // A reload keeps the choice; every request of the page to /api names it (GET /api/orgs and /api/session excepted: they are about the person, asked before the choice is known).
      const headers: Record<string, string | undefined> = {}
      page.on('request', (request) => {
        const url = new URL(request.url())
        if (url.pathname.startsWith('/api/')) headers[`${request.method()} ${url.pathname}`] = request.headers()['x-alttext-org']
      })
      await page.reload()
      await page.locator('main h1', { hasText: 'Members of Switcher Ltd' }).waitFor()
      await page.waitForSelector('main [aria-busy="true"]', { state: 'detached' })
      await page.getByRole('link', { name: 'Overview' }).click()
      await page.locator('main h1', { hasText: 'Overview' }).waitFor()
      await page.waitForSelector('main [aria-busy="true"]', { state: 'detached' })
      const inOrg = Object.entries(headers).filter(([name]) => name !== 'GET /api/orgs' && name !== 'GET /api/session')
      expect(inOrg.length).toBeGreaterThan(2)
      expect(inOrg.filter(([, value]) => value !== org!.id)).toEqual([])

      // Switching back: the page loads again for the personal organisation and its heading takes the focus.
      await switcher(page).click()
      await page.locator('.org-panel button', { hasText: 'Personal' }).click()
      await page.waitForFunction(() => (globalThis as any).document.activeElement?.tagName === 'H1')
      expect((await switcher(page).textContent())?.trim()).toBe('Organisation: Personal (owner)')
      await page.reload()
      await page.locator('main h1', { hasText: 'Overview' }).waitFor()
      expect((await switcher(page).textContent())?.trim()).toBe('Organisation: Personal (owner)')
      // Escape closes the switcher and gives the focus back to its button.
      await switcher(page).focus()
      await page.keyboard.press('Enter')
      await page.locator('.org-panel:not([hidden])').waitFor()
      await page.keyboard.press('Escape')
      await page.locator('.org-panel[hidden]').waitFor({ state: 'attached' })
      expect(await page.evaluate(() => (globalThis as any).document.activeElement?.classList.contains('org-toggle'))).toBe(true)
      expect(problems).toEqual([])
    } finally {
      await page.context().close()
    }
  }, 60_000)

  test('members: invite, accept in a second browser (signing in first), role change, leave, remove, withdraw; errors in words', async () => {
    const reviewer = await env.service.api.register()
    const third = await env.service.api.register()
    const page = await signedIn(owner)
    let other: BrowserContext | undefined
    try {
      await openPage(page, '/')
      await createOrg(page, 'Members Co')
      await invite(page, reviewer.email, 'reviewer')
      await page.locator('main section', { hasText: 'Pending invitations' }).locator('li', { hasText: reviewer.email }).waitFor()

      // A second browser, signed out: the link leads through sign-in and back to the invitation.
      other = await newContext(env)
      other.setDefaultTimeout(10_000)
      const second = await other.newPage()
      await openPage(second, await invitationPath(reviewer.email))
      await second.locator('main h1', { hasText: 'Sign in' }).waitFor()
      await second.fill('#email', reviewer.email)
      await second.fill('#password', reviewer.password)
      await second.click('main form button[type=submit]')
      await second.locator('main h1', { hasText: 'Join an organisation' }).waitFor()
      await second.click('main button:has-text("Accept the invitation")')
      await second.locator('main .notice', { hasText: 'You joined Members Co as a reviewer' }).waitFor()
      expect((await switcher(second).textContent())?.trim()).toBe('Organisation: Members Co (reviewer)')
      // A reviewer has no Members page in the navigation.
      expect(await second.locator('nav a', { hasText: 'Members' }).count()).toBe(0)

      // The owner sees the new member; the invitation is no longer pending.
      await page.reload()
      await page.locator('main h1', { hasText: 'Members of Members Co' }).waitFor()
      const row = page.locator('li.member', { hasText: reviewer.email })
      await row.waitFor()
      expect(await page.locator('main section', { hasText: 'Pending invitations' }).locator('li').count()).toBe(0)

      // Role change: the select alone changes nothing; its button does.
      await row.locator('select').selectOption('author')
      await row.locator('button', { hasText: 'Change the role' }).click()
      await page.locator('main p[role=status]', { hasText: `${reviewer.email} is now an author.` }).waitFor()
      await second.reload()
      await second.locator('main h1').waitFor()
      expect((await switcher(second).textContent())?.trim()).toBe('Organisation: Members Co (author)')

      // The member leaves by themselves, from the Account page, after a confirm dialog.
      await openPage(second, '/account')
      await second.click('main button:has-text("Leave Members Co")')
      await second.locator('dialog[open]', { hasText: 'Leave Members Co?' }).waitFor()
      await second.click('dialog[open] button:has-text("Leave the organisation")')
      await second.locator('main .notice', { hasText: 'You left Members Co' }).waitFor()
      expect((await switcher(second).textContent())?.trim()).toBe('Organisation: Personal (owner)')
      expect((await orgsOf(reviewer)).map((each) => each.name)).not.toContain('Members Co')

      // The third person joins with the key's own session, then the owner removes them (asked first).
      await invite(page, third.email, 'reviewer')
      const thirdPage = await signedIn(third)
      await accept(thirdPage, await invitationPath(third.email), 'Members Co')
      await page.reload()
      const thirdRow = page.locator('li.member', { hasText: third.email })
      await thirdRow.waitFor()
      await thirdRow.locator('button', { hasText: 'Remove' }).click()
      await page.locator('dialog[open]', { hasText: `Remove ${third.email} from Members Co?` }).waitFor()
      await page.click('dialog[open] button:has-text("Remove the member")')
      await page.locator('main p[role=status]', { hasText: `${third.email} is removed from Members Co` }).waitFor()
      // The status can be said before the list is drawn again: the row's going is a state to reach.
      await page.locator('li.member', { hasText: third.email }).waitFor({ state: 'detached' })
      expect(await page.locator('li.member', { hasText: third.email }).count()).toBe(0)
      // Their console, on its next request, falls back to the personal organisation and says why.
      await thirdPage.reload()
      await thirdPage.locator('main h1').waitFor()
      expect((await switcher(thirdPage).textContent())?.trim()).toBe('Organisation: Personal (owner)')
      await thirdPage.context().close()

      // An invitation withdrawn: gone from the list; its link no longer works.
      const late = `late-${Date.now()}@example.com`
      await invite(page, late, 'author')
      const pending = page.locator('main section', { hasText: 'Pending invitations' }).locator('li', { hasText: late })
      await pending.locator('button', { hasText: 'Withdraw' }).click()
      await page.locator('main p[role=status]', { hasText: `The invitation of ${late} is withdrawn` }).waitFor()
      await pending.waitFor({ state: 'detached' })

      // Errors in plain words: the only owner cannot step down; a member cannot be invited twice.
      const me = page.locator('li.member', { hasText: owner.email })
      await me.locator('select').selectOption('admin')
      await me.locator('button', { hasText: 'Change the role' }).click()
      await page.locator('main [role=alert]', { hasText: 'An organisation needs at least one owner' }).waitFor()
      await page.fill('#invite_email', owner.email)
      await page.click('main button:has-text("Send the invitation")')
      await page.locator('main [role=alert]', { hasText: 'is a member of this organisation already' }).waitFor()
    } finally {
      await other?.close()
      await page.context().close()
    }
  }, 90_000)

  test('an invitation for another address says so in words', async () => {
    const invited = `someone-${Date.now()}@example.com`
    const page = await signedIn(owner)
    const stranger = await env.service.api.register()
    const theirs = await signedIn(stranger)
    try {
      await openPage(page, '/')
      await createOrg(page, 'Mismatch Inc')
      await invite(page, invited, 'reviewer')
      await openPage(theirs, await invitationPath(invited))
      await theirs.click('main button:has-text("Accept the invitation")')
      await theirs.locator('main [role=alert]', { hasText: 'This invitation was sent to another email address' }).waitFor()
      await openPage(theirs, `/invitation?token=${'0'.repeat(64)}`)
      await theirs.click('main button:has-text("Accept the invitation")')
      await theirs.locator('main [role=alert]', { hasText: 'This invitation link does not work' }).waitFor()
    } finally {
      await theirs.context().close()
      await page.context().close()
    }
  }, 60_000)

  for (const width of [1280, 320])
    test(`axe-core finds nothing on the switcher, Members (with a pending invitation and the remove dialog) and the invitation page at ${width} px, light and dark`, async () => {
      const member = await env.service.api.register()
      const page = await signedIn(owner, width)
      try {
        await openPage(page, '/')
        await page.locator('.menu-toggle:visible, nav a:visible').first().waitFor()
        const found: Record<string, unknown> = {}
        const check = async (name: string, show: () => Promise<void>) => {
          for (const [scheme, findings] of Object.entries(await findingsInBothSchemes(page, show))) found[`${name}, ${scheme}`] = findings
        }
        await check('switcher open', async () => {
          await openPage(page, '/')
          await switcher(page).click()
          await page.locator('.org-panel:not([hidden])').waitFor()
        })
        await switcher(page).click()
        await createOrg(page, `Axe ${width}`)
        await invite(page, member.email, 'reviewer')
        await check('members', () => openPage(page, '/members'))
        const memberPage = await signedIn(member, width)
        await accept(memberPage, await invitationPath(member.email), `Axe ${width}`)
        await check('remove dialog', async () => {
          await openPage(page, '/members')
          await page.locator('li.member', { hasText: member.email }).locator('button', { hasText: 'Remove' }).click()
          await page.locator('dialog[open]').waitFor()
        })
        for (const [scheme, findings] of Object.entries(await findingsInBothSchemes(memberPage, () => openPage(memberPage, '/invitation?token=abc'))))
          found[`invitation, ${scheme}`] = findings
        await memberPage.context().close()
        expect(found).toEqual({})
      } finally {
        await page.context().close()
      }
    }, 90_000)
})
