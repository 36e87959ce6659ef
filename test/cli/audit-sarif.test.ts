// SARIF as code scanning takes it: the audit's SARIF for HTML pages, Markdown and a book (with a
// baseline, ignored and not-checked images) validates against the OASIS SARIF 2.1.0 schema (vendored
// under test/fixtures/sarif) and passes Microsoft's SARIF Multitool (npm @microsoft/sarif-multitool)
// with its GitHub rules and its SARIF rules: no error, no warning. The Multitool tries to fetch rule
// help URLs, so it runs in a network namespace of its own with no network (`unshare -n`, as root).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import multitoolPath from '@microsoft/sarif-multitool'
import Ajv from 'ajv-draft-04'
import addFormats from 'ajv-formats'
import { TOOL_INFORMATION_URI } from '../../src/cli/audit/sarif'
import { bookFiles, buildEpub } from '../support/epub'
import { REPO_ROOT } from '../support/process'
import { audit, FIXTURE_SITE, readJson } from './audit-support'

/** util-linux's unshare (Debian): `-n` gives the Multitool a network namespace with only its own loopback. */
const UNSHARE = '/usr/bin/unshare'
const validateSchema = (() => {
  const ajv = new Ajv({ allErrors: true, strict: false })
  addFormats(ajv)
  return ajv.compile(readJson(join(REPO_ROOT, 'test', 'fixtures', 'sarif', 'sarif-schema-2.1.0.json')))
})()

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'alttext-sarif-'))
  mkdirSync(join(dir, 'site', 'img'), { recursive: true })
  writeFileSync(join(dir, 'site', 'img', 'logo.png'), readFileSync(join(FIXTURE_SITE, 'img', 'logo.png')))
  writeFileSync(
    join(dir, 'site', 'index.html'),
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Kites</title></head><body>\n<img src="img/logo.png">\n<img src="img/logo.png" alt="IMG_0001.JPG">\n<img src="img/gone.png">\n<img src="img/logo.png" data-alttext-ignore>\n</body></html>\n',
  )
  mkdirSync(join(dir, 'docs'))
  writeFileSync(
    join(dir, 'docs', 'guide.md'),
    '# Guide\n\n![](../site/img/logo.png)\n\n<!-- alttext-ignore -->\n![](badge.svg)\n\n![DSC_0002.jpg](../site/img/logo.png)\n',
  )
  mkdirSync(join(dir, 'books'))
  const logo = new Uint8Array(readFileSync(join(FIXTURE_SITE, 'img', 'logo.png')))
  writeFileSync(
    join(dir, 'books', 'handbook.epub'),
    buildEpub(
      bookFiles({
        chapters: [
          { name: 'ch1.xhtml', title: 'One', body: '<p>Welcome.</p>\n<img src="images/logo.png"/>' },
          { name: 'ch2.xhtml', title: 'Two', body: '<figure><img src="images/logo.png" alt="image of logo"/></figure>' },
        ],
        images: { 'images/logo.png': logo },
      }),
    ),
  )
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The Multitool's findings on a SARIF file (GitHub and SARIF rules), run with no network. */
function multitool(file: string): { level: string; ruleId: string; text: string }[] {
  const out = join(dir, `${file}.validation.sarif`)
  const run = spawnSync(UNSHARE, ['-n', multitoolPath, 'validate', join(dir, file), '--rule-kind', 'Gh;Sarif', '--output', out, '--log', 'ForceOverwrite'], {
    encoding: 'utf8',
    timeout: 120_000,
  })
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' })
  expect(run.stdout).toContain('Analysis completed successfully.')
  const log = readJson(out)
  return (log.runs[0].results ?? []).map((result: any) => ({
    level: result.level ?? 'warning',
    ruleId: result.ruleId,
    text: result.message.text ?? JSON.stringify(result.message.arguments),
  }))
}

describe('SARIF Multitool (GitHub rules) and the OASIS schema', () => {
  test('the Multitool runs here, offline, and does find what GitHub needs (a SARIF without help or informationUri)', async () => {
    const res = await audit(['--check', '-q', 'site', '--sarif', 'bare.sarif'], {}, dir)
    expect(res.code).toBe(1)
    const log = readJson(join(dir, 'bare.sarif'))
    delete log.runs[0].tool.driver.informationUri
    delete log.runs[0].tool.driver.rules[0].help
    writeFileSync(join(dir, 'bare.sarif'), JSON.stringify(log))
    const found = multitool('bare.sarif').map((finding) => `${finding.level} ${finding.ruleId}`)
    expect(found).toContain('error GH2012')
    expect(found).toContain('warning SARIF2005')
  }, 60_000)

  const inputs: [string, string[]][] = [
    ['HTML pages', ['site']],
    ['Markdown', ['docs']],
    ['a book', ['books/handbook.epub']],
    ['all three, with a baseline', ['site', 'docs', 'books', '--baseline', 'baseline.json']],
  ]
  for (const [name, args] of inputs) {
    test(`${name}: valid against the schema; no Multitool error or warning`, async () => {
      if (args.includes('--baseline')) {
        const written = await audit(['--check', '-q', 'site', 'books', '--write-baseline', 'baseline.json'], {}, dir)
        expect(written.code).toBe(0)
      }
      const file = `${name.replaceAll(' ', '-')}.sarif`
      const res = await audit(['--check', '-q', ...args, '--sarif', file], {}, dir)
      expect(res.code).toBe(1)
      const log = readJson(join(dir, file))
      expect(validateSchema(log) ? [] : validateSchema.errors).toEqual([])
      expect(log.runs[0].tool.driver.informationUri).toBe(TOOL_INFORMATION_URI)
      expect(log.runs[0].results.length).toBeGreaterThan(0)
      expect(multitool(file).filter((finding) => finding.level === 'error' || finding.level === 'warning')).toEqual([])
    }, 60_000)
  }

  test("a book's result is at the book, names its content document (message, logical location), and keeps its place in it", async () => {
    const res = await audit(['--check', '-q', 'books', '--sarif', 'book.sarif'], {}, dir)
    expect(res.code).toBe(1)
    const results = readJson(join(dir, 'book.sarif')).runs[0].results
    expect(results.map((result: any) => [result.ruleId, result.message.text, result.locations])).toEqual([
      [
        'alt-missing',
        'In OEBPS/ch1.xhtml: The image images/logo.png has no alt.',
        [
          {
            physicalLocation: { artifactLocation: { uri: 'books/handbook.epub' }, region: { startLine: 10, startColumn: 1 } },
            logicalLocations: [{ name: 'ch1.xhtml', fullyQualifiedName: 'OEBPS/ch1.xhtml' }],
          },
        ],
      ],
      [
        'alt-poor',
        'In OEBPS/ch2.xhtml: The image images/logo.png has a poor alt "image of logo": starts with a redundant phrase ("image of").',
        [
          {
            physicalLocation: { artifactLocation: { uri: 'books/handbook.epub' }, region: { startLine: 9, startColumn: 9 } },
            logicalLocations: [{ name: 'ch2.xhtml', fullyQualifiedName: 'OEBPS/ch2.xhtml' }],
          },
        ],
      ],
    ])
    // The same image in two chapters: two fingerprints.
    expect(new Set(results.map((result: any) => result.partialFingerprints['alttextImage/v1'])).size).toBe(2)
  })

  test('with a baseline: baselineState per result, and the baseline fingerprint as a partial fingerprint', async () => {
    await audit(['--check', '-q', 'site', '--write-baseline', 'site-baseline.json'], {}, dir)
    writeFileSync(
      join(dir, 'site', 'new.html'),
      '<!doctype html><html lang="en"><head><title>N</title></head><body><img src="img/logo.png" alt="photo"></body></html>',
    )
    try {
      const res = await audit(['--check', '-q', 'site', '--baseline', 'site-baseline.json', '--sarif', 'b.sarif'], {}, dir)
      expect(res.code).toBe(1)
      const run = readJson(join(dir, 'b.sarif')).runs[0]
      const baseline = readJson(join(dir, 'site-baseline.json'))
      expect(run.results.map((result: any) => [result.locations[0].physicalLocation.artifactLocation.uri, result.baselineState])).toEqual([
        ['site/index.html', 'unchanged'],
        ['site/index.html', 'unchanged'],
        ['site/index.html', 'unchanged'],
        ['site/new.html', 'new'],
      ])
      const accepted = run.results
        .filter((result: any) => result.baselineState === 'unchanged')
        .map((result: any) => result.partialFingerprints['alttextFinding/v1'])
      expect(accepted.sort()).toEqual(baseline.findings.map((entry: any) => entry.fingerprint).sort())
      // The image whose file is missing is said to be not checked, in its result's message.
      expect(run.results[2].message.text).toBe('The image img/gone.png has no alt. The image itself was not checked: site/img/gone.png does not exist.')
    } finally {
      rmSync(join(dir, 'site', 'new.html'))
    }
  })
})
