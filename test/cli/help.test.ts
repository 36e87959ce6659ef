// The --help texts of `alttext` and each of its commands read cleanly: no doubled parentheses (a
// variable's default that has its own parenthesis is not wrapped in another).
import { describe, expect, test } from 'bun:test'
import { runCommand } from '../support/process'

const HELPS = [[], ['describe'], ['audit'], ['admin'], ['admin', 'accounts', 'list'], ['backup'], ['restore'], ['doctor'], ['db'], ['db', 'copy']]

describe('--help', () => {
  for (const command of HELPS) {
    test(`alttext ${[...command, '--help'].join(' ')}: no doubled or back-to-back parentheses`, async () => {
      const { code, stdout } = await runCommand([...command, '--help'])
      expect(code).toBe(0)
      for (const line of stdout.split('\n')) {
        expect(line).not.toContain('))')
        expect(line).not.toContain('((')
        expect(line).not.toContain(') (')
      }
    })
  }

  test('the command list says what audit reads: HTML, Markdown, EPUB and web pages', async () => {
    const { stdout } = await runCommand(['--help'])
    expect(stdout).toMatch(/^ {2}alttext audit +find and fix missing or poor alt text in HTML and Markdown files, EPUB books and web pages$/m)
  })

  test('a default with its own parenthesis is shown whole, after the meaning', async () => {
    const { stdout } = await runCommand(['--help'])
    expect(stdout).toMatch(/^ {2}ALTTEXT_MAIL_FROM +sender address of reset mails \[default: unset \(alttext@<public host>\)\]$/m)
    expect(stdout).toMatch(/^ {2}PORT +listen port \(0 picks a free port\) \[default: 3000\]$/m)
  })
})
