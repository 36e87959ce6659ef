// What the gate's controls refuse: a baseline that is not one (not JSON, another tool's, another
// version, entries without fingerprints, missing, too large), a glob that would silently match nothing,
// and the controls beside --apply. Each is a usage error (exit 2) that names the flag, before any page is read.
import { describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { globProblem } from '../../src/cli/audit/exclude'
import { audit, siteCopy } from './audit-support'

describe('a broken --baseline is a usage error', () => {
  const cases: [string, string | Uint8Array, RegExp][] = [
    ['not JSON', '{"version":1,', /--baseline broken\.json: not JSON/],
    ['not UTF-8', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), /--baseline broken\.json: not JSON/],
    ['a list', '[]', /--baseline broken\.json: not a baseline: expected \{"version":1,"tool":"alttext","findings":\[\.\.\.\]\}/],
    ['another tool', '{"version":1,"tool":"eslint","findings":[]}', /--baseline broken\.json: a baseline of "eslint", not of alttext/],
    ['no tool', '{"version":1,"findings":[]}', /--baseline broken\.json: a baseline of another tool, not of alttext/],
    ['another version', '{"version":2,"tool":"alttext","findings":[]}', /version 2 is not one this alttext reads \(1\); write it again with --write-baseline/],
    ['findings not a list', '{"version":1,"tool":"alttext","findings":{}}', /"findings" is not a list/],
    ['an entry without a fingerprint', '{"version":1,"tool":"alttext","findings":[{"document":"a.html"}]}', /finding 1 has no fingerprint of 32 hex digits/],
    ['a short fingerprint', '{"version":1,"tool":"alttext","findings":[{"fingerprint":"abc"}]}', /finding 1 has no fingerprint of 32 hex digits/],
  ]
  for (const [name, text, message] of cases) {
    test(name, async () => {
      const copy = siteCopy()
      try {
        writeFileSync(join(copy.dir, 'broken.json'), text)
        const res = await audit(['--check', 'site', '--baseline', 'broken.json'], {}, copy.dir)
        expect(res.code).toBe(2)
        expect(res.stderr).toMatch(message)
        // Nothing was audited: no finding lines.
        expect(res.stdout).toBe('')
      } finally {
        copy.cleanup()
      }
    })
  }

  test('a missing file, a folder, and no file name', async () => {
    const copy = siteCopy()
    try {
      const missing = await audit(['--check', 'site', '--baseline', 'none.json'], {}, copy.dir)
      expect(missing.code).toBe(2)
      expect(missing.stderr).toContain('--baseline none.json: cannot be read (write one with --write-baseline none.json)')
      const folder = await audit(['--check', 'site', '--baseline', 'site'], {}, copy.dir)
      expect(folder.code).toBe(2)
      expect(folder.stderr).toContain('--baseline site:')
      for (const flag of ['--baseline', '--write-baseline']) {
        const dash = await audit(['--check', 'site', flag, '-'], {}, copy.dir)
        expect(dash.code).toBe(2)
        expect(dash.stderr).toContain(`${flag} needs a file name`)
      }
    } finally {
      copy.cleanup()
    }
  })
})

describe('a bad --exclude glob is a usage error', () => {
  test('unbalanced brackets and braces, negation, empty: refused (Bun.Glob would match nothing without a word)', async () => {
    expect(globProblem('vendor/**')).toBeNull()
    expect(globProblem('{a,b}/*.html')).toBeNull()
    expect(globProblem('[ab]*.md')).toBeNull()
    expect(globProblem('a\\[literal')).toBeNull()
    expect(globProblem('{a,b')).toBe('has a "{" without its "}"')
    expect(globProblem('a}')).toBe('has a "}" without its "{"')
    expect(globProblem('[ab')).toBe('has a "[" without its "]"')
    expect(globProblem('!vendor/**')).toStartWith('starts with "!": negation is not supported')
    expect(globProblem(' ')).toBe('is empty')
    expect(globProblem('a\\')).toBe('ends with a lone backslash')
    const copy = siteCopy()
    try {
      const res = await audit(['--check', 'site', '--exclude', 'ok/**', '--exclude', 'site/{vendor'], {}, copy.dir)
      expect(res.code).toBe(2)
      expect(res.stderr).toContain('--exclude "site/{vendor" has a "{" without its "}"')
      expect(res.stdout).toBe('')
    } finally {
      copy.cleanup()
    }
  })
})

test('--apply refuses the gate controls: it reads no pages', async () => {
  const copy = siteCopy()
  try {
    writeFileSync(join(copy.dir, 'r.csv'), 'file,line,column,current_alt,proposed_alt\n')
    for (const flags of [
      ['--exclude', 'x/**'],
      ['--baseline', 'b.json'],
      ['--write-baseline', 'b.json'],
    ]) {
      const res = await audit(['--apply', 'r.csv', '--fix', 'out', ...flags], {}, copy.dir)
      expect(res.code).toBe(2)
      expect(res.stderr).toContain(`--apply sends nothing and writes only the files: it cannot go with ${flags[0]}`)
    }
  } finally {
    copy.cleanup()
  }
})
