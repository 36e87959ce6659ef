// What the console's browser tests share: the real service with the fake model, a local HTTPS image host
// and a loopback SMTP capture; Debian's Chromium; and small steps (a signed-in browser context, the pages).
import { afterAll, beforeAll } from 'bun:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { type AxeViolation, axeViolations, chromiumInstalled, launchChromium } from './browser'
import { type FakeOllama, startFakeOllama } from './fake-ollama'
import { type HttpsImageServer, startHttpsImageServer } from './https-image-server'
import { type RegisteredAccount, startTestService, type TestService } from './service'
import { type SmtpCapture, startSmtpCapture } from './smtp'

export const ALT_TEXT_REPLY = 'Two children flying a red kite on a windy beach.'

/**
 * Whether this machine runs the browser tests: CI installs Chromium and must run them (a missing
 * Chromium fails there); elsewhere they skip, saying so once per file.
 */
export function browserTestsEnabled(file: string): boolean {
  const enabled = chromiumInstalled() || process.env.CI === 'true'
  if (!enabled) console.warn(`SKIPPED ${file}: the console's browser tests need Chromium at /usr/bin/chromium (apt-get install chromium)`)
  return enabled
}

export type ConsoleEnv = {
  service: TestService
  ollama: FakeOllama
  images: HttpsImageServer
  smtp: SmtpCapture
  browser: Browser
  url: string
  stop(): Promise<void>
}

/** Images this fake model finds purely decorative (when asked): those 123 px wide. */
export const DECORATIVE_WIDTH = 123

export async function startConsoleEnv(options: { rateLimits?: boolean; env?: Record<string, string> } = {}): Promise<ConsoleEnv> {
  if (!chromiumInstalled()) throw new Error('Chromium is missing at /usr/bin/chromium: .ci/run installs it (apt-get install chromium)')
  const [ollama, images, smtp] = await Promise.all([
    startFakeOllama({ reply: ALT_TEXT_REPLY, decorative: (image) => image.width === DECORATIVE_WIDTH }),
    startHttpsImageServer(),
    startSmtpCapture(),
  ])
  const service = await startTestService({
    env: {
      OLLAMA_HOST: ollama.url,
      ALTTEXT_MODEL: 'llava',
      ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
      NODE_EXTRA_CA_CERTS: images.caPath,
      ALTTEXT_SMTP_URL: smtp.url,
      ALTTEXT_MAIL_FROM: 'alttext@alttext.test',
      ALTTEXT_RATE_LIMITS: options.rateLimits === false ? 'off' : 'on',
      ...options.env,
    },
  })
  const browser = await launchChromium()
  return {
    service,
    ollama,
    images,
    smtp,
    browser,
    url: service.url,
    async stop() {
      await browser.close()
      await service.stop()
      await Promise.all([ollama.stop(), images.stop(), smtp.stop()])
    },
  }
}

type ConsoleFileOptions = {
  rateLimits?: boolean
  env?: Record<string, string>
  /** Register one account for the file's tests. */
  account?: boolean
  /** Open one signed-out page for the file's tests, its waits bounded at 10 s, with what it reports as failed. */
  page?: boolean
}

type SharedPage = { context: BrowserContext; page: Page; problems: string[] }

/** What the file's tests get: the env, and the account and the page when the options ask for them. */
type StartedConsole<O extends ConsoleFileOptions> = { env: ConsoleEnv } & (O extends { account: true } ? { account: RegisteredAccount } : unknown) &
  (O extends { page: true } ? SharedPage : unknown)

/**
 * The console env for one browser test file, as serviceForFile is for the service alone: returns whether
 * the file's tests run (browserTestsEnabled); when they do, starts the env (and what `options` ask for)
 * before them, hands it to `onStarted`, and stops it after them.
 */
export function consoleForFile<const O extends ConsoleFileOptions>(file: string, options: O, onStarted: (started: StartedConsole<O>) => unknown): boolean {
  const run = browserTestsEnabled(file)
  let env: ConsoleEnv | undefined
  let context: BrowserContext | undefined
  beforeAll(async () => {
    if (!run) return
    env = await startConsoleEnv({ rateLimits: options.rateLimits, env: options.env })
    const account = options.account ? await env.service.api.register() : undefined
    let shared: SharedPage | undefined
    if (options.page) {
      context = await newContext(env)
      context.setDefaultTimeout(10_000)
      const page = await context.newPage()
      shared = { context, page, problems: watchPageProblems(page) }
    }
    await onStarted({ env, account, ...shared } as StartedConsole<O>)
  })
  afterAll(async () => {
    await context?.close()
    await env?.stop()
  })
  return run
}

export type Viewport = { width: number; scheme: 'light' | 'dark' }

/** The windows the accessibility checks use: wide and 320 px (reflow), each in the light and the dark scheme. */
export const A11Y_VIEWPORTS: Viewport[] = [
  { width: 1280, scheme: 'light' },
  { width: 1280, scheme: 'dark' },
  { width: 320, scheme: 'light' },
  { width: 320, scheme: 'dark' },
]

/** The window where axe-core runs all its rules on every page and state. */
export const FULL_CHECK: Viewport = { width: 1280, scheme: 'light' }
/** The axe-core rules the dark scheme changes the outcome of: colours (the dark scheme sets colours only). */
export const SCHEME_RULES = ['color-contrast', 'link-in-text-block']
/**
 * The axe-core rules a narrow window changes the outcome of: colours behind text as the layout moves,
 * targets' size and spacing, regions that scroll, orientation locks (reflow: the sideways-scrolling check).
 */
export const WIDTH_RULES = ['color-contrast', 'link-in-text-block', 'target-size', 'scrollable-region-focusable', 'css-orientation-lock']

/** The rules to run at a window other than FULL_CHECK; undefined: all of them. */
export function rulesAt(viewport: Viewport): string[] | undefined {
  if (viewport.width === FULL_CHECK.width && viewport.scheme === FULL_CHECK.scheme) return undefined
  return [...new Set([...(viewport.width === FULL_CHECK.width ? [] : WIDTH_RULES), ...(viewport.scheme === FULL_CHECK.scheme ? [] : SCHEME_RULES)])]
}

const SHOWN_HERE = 'data-a11y-shown-here'

/**
 * Marks the elements this window shows and FULL_CHECK's hides (the console's Menu button of phones), by
 * looking at the page in both, so that they get every rule too; the number marked. A page whose elements
 * differ between the two is marked whole.
 */
async function markShownOnlyHere(page: Page, here: Viewport): Promise<number> {
  await page.evaluate((mark) => {
    for (const marked of (globalThis as any).document.querySelectorAll(`[${mark}]`)) marked.removeAttribute(mark)
  }, SHOWN_HERE)
  const shown = () =>
    page.evaluate(() =>
      Array.from((globalThis as any).document.querySelectorAll('body *'), (e: any) => e.checkVisibility({ visibilityProperty: true }) as boolean),
    )
  const size = page.viewportSize()!
  const shownHere = await shown()
  await page.setViewportSize({ width: FULL_CHECK.width, height: size.height })
  await page.emulateMedia({ colorScheme: FULL_CHECK.scheme })
  const shownThere = await shown()
  await page.setViewportSize(size)
  await page.emulateMedia({ colorScheme: here.scheme })
  return page.evaluate(
    ({ here, there, mark }) => {
      const doc = (globalThis as any).document
      const all: any[] = Array.from(doc.querySelectorAll('body *'))
      if (all.length !== here.length || all.length !== there.length) {
        doc.body.setAttribute(mark, '')
        return all.length
      }
      let marked = 0
      all.forEach((element, i) => {
        if (here[i] && !there[i] && !element.parentElement?.closest(`[${mark}]`)) {
          element.setAttribute(mark, '')
          marked++
        }
      })
      return marked
    },
    { here: shownHere, there: shownThere, mark: SHOWN_HERE },
  )
}

/** What an accessibility check found on a page: axe violations, how far it scrolls sideways, script errors. */
export type PageFindings = { axe: AxeViolation[]; overflow: number; problems: string[] }

/**
 * The page as it is now, in `viewport` (its window's width and colour scheme): axe-core (the rules of
 * `tags`, or only those the window changes: rulesAt, plus every rule on what only this window shows),
 * sideways scrolling and the script errors since the last check; undefined when all is well.
 */
async function findingsHere(page: Page, viewport: Viewport, tags: string[] | undefined, problems: string[]): Promise<PageFindings | undefined> {
  const overflow = await page.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement
    return root.scrollWidth - root.clientWidth
  })
  const rules = rulesAt(viewport)
  const axe = rules ? await axeViolations(page, { rules }) : await axeViolations(page, tags)
  if (rules && (await markShownOnlyHere(page, viewport)) > 0) axe.push(...(await axeViolations(page, tags, { include: `[${SHOWN_HERE}]` })))
  const seen = problems.splice(0)
  return axe.length || overflow > 0 || seen.length ? { axe, overflow, problems: seen } : undefined
}

/**
 * Runs `show` (opening the page and bringing it into the state to check) while watching for script errors,
 * then checks the page with axe-core (the rules of `tags`) and for sideways scrolling; undefined when all is well.
 * With a `viewport` other than FULL_CHECK, axe-core runs only the rules that window changes (rulesAt), and
 * all of them on what only that window shows: FULL_CHECK's run of the same page and state covers the rest.
 */
export async function pageFindings(
  page: Page,
  show: () => Promise<void>,
  options: { tags?: string[]; viewport?: Viewport } = {},
): Promise<PageFindings | undefined> {
  const problems = watchPageProblems(page)
  await show()
  return findingsHere(page, options.viewport ?? FULL_CHECK, options.tags, problems)
}

/**
 * pageFindings at the page's width in the light and then the dark scheme: `show` runs once, in the
 * light scheme, and the scheme is switched in place (both schemes differ in CSS colours only, and no
 * script reads the scheme), so each state is loaded and brought about once per width.
 */
export async function findingsInBothSchemes(
  page: Page,
  show: () => Promise<void>,
  tags?: string[],
): Promise<Partial<Record<Viewport['scheme'], PageFindings>>> {
  const problems = watchPageProblems(page)
  await page.emulateMedia({ colorScheme: 'light' })
  await show()
  const width = page.viewportSize()!.width
  const found: Partial<Record<Viewport['scheme'], PageFindings>> = {}
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme })
    const findings = await findingsHere(page, { width, scheme }, tags, problems)
    if (findings) found[scheme] = findings
  }
  return found
}

/** What the accessibility checks run at a window, for a test's name. */
export const checkedAt = (viewport: Viewport) => rulesAt(viewport)?.join(', ') ?? 'any axe rule'

export function newContext(
  env: ConsoleEnv,
  viewport: Viewport = { width: 1280, scheme: 'light' },
  extra: { reducedMotion?: 'reduce' } = {},
): Promise<BrowserContext> {
  return env.browser.newContext({
    viewport: { width: viewport.width, height: 800 },
    colorScheme: viewport.scheme,
    reducedMotion: extra.reducedMotion ?? 'no-preference',
    baseURL: env.url,
    permissions: ['clipboard-read', 'clipboard-write'],
  })
}

/** Signs the context in (its cookie jar gets the session), as the sign-in form would. */
export async function signInContext(context: BrowserContext, env: ConsoleEnv, account: { email: string; password: string }): Promise<void> {
  const response = await context.request.post(`${env.url}/api/session`, {
    data: { email: account.email, password: account.password },
    headers: { origin: env.url },
  })
  if (response.status() !== 200) throw new Error(`POST /api/session answered ${response.status()}: ${await response.text()}`)
}

/** Opens a console page and waits until the app has rendered its heading and loaded what it shows. */
export async function openPage(page: Page, path: string): Promise<void> {
  await page.goto(path)
  await page.waitForSelector('main h1')
  await settled(page)
}

/** Waits until nothing in the page says it is loading (`aria-busy`). */
export const settled = (page: Page) => page.waitForSelector('main [aria-busy="true"]', { state: 'detached' })

/** The text the page copied to the clipboard. */
export const clipboardText = (page: Page): Promise<string> =>
  page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText())

/** Collects what the page reports as failed: uncaught errors, console errors and CSP violations. */
export function watchPageProblems(page: Page): string[] {
  const problems: string[] = []
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text()))
      problems.push(`console error: ${message.text()}`)
  })
  return problems
}

/** The reset link of the newest mail to `email`, made relative to the service the test started. */
export async function resetPathFromMail(smtp: SmtpCapture, email: string, after: number): Promise<string> {
  const mail = await smtp.waitForMail((m) => m.to.includes(email) && m.receivedAt.getTime() >= after)
  const path = /\/reset-password\?token=[\w-]+/.exec(mail.text)?.[0]
  if (!path) throw new Error(`no reset link in the mail: ${mail.text}`)
  return path
}
