// Debian's Chromium driven by playwright-core, for page tests. Flags keep it off the network: the machine
// has none beyond loopback, and Chromium's background services would try.
import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

export const CHROMIUM_PATH = '/usr/bin/chromium'

export const chromiumInstalled = () => existsSync(CHROMIUM_PATH)

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}

/** The rules axe-core runs: WCAG 2.0, 2.1 and 2.2 at levels A and AA. */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']

export type AxeViolation = { id: string; impact: string | null; nodes: number; targets: string[] }

/** Which elements axe-core checks: the whole page, or those matching `include` (a CSS selector). */
export type AxeScope = { include?: string }

/**
 * Runs axe-core in the page and returns the violations of WCAG 2.0–2.2 A/AA rules, or of the rules of
 * `only` (tags, or rule ids as `{ rules }`).
 */
export async function axeViolations(
  page: import('playwright-core').Page,
  only: string[] | { rules: string[] } = AXE_TAGS,
  scope: AxeScope = {},
): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol: the page's own CSP rightly refuses an injected script tag.
  // Once per loaded page: a page checked in several windows keeps it.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(await Bun.file(require.resolve('axe-core/axe.min.js')).text())
  const runOnly = Array.isArray(only) ? { type: 'tag', values: only } : { type: 'rule', values: only.rules }
  return page.evaluate(
    async ({ runOnly, include }) => {
      const axe = (
        globalThis as unknown as {
          axe: { run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }> }
        }
      ).axe
      const context = include ? { include: [include] } : (globalThis as unknown as { document: unknown }).document
      const result = await axe.run(context, { runOnly })
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, targets: v.nodes.slice(0, 5).map((n) => String(n.target)) }))
    },
    { runOnly, include: scope.include },
  )
}
