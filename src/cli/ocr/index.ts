// `alttext ocr FILE...`: the text the service's built-in OCR reads in image files, in reading order, or
// with --json every line with its confidence and box and the time the read took. For operators checking
// the OCR (a model folder of ALTTEXT_OCR_MODELS, a platform), the smoke test of the compiled binary and
// the benchmark; no service, no network. Files are read one after another by one reader, as the service does.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { CONFIG_VARIABLES, ConfigError, ocrModelsDir } from '../../config'
import { createTextReader, type ImageText } from '../../ocr'
import { EXIT, operatorHelpText, parseCommandArgs, UsageError } from '../shared/args'
import type { CommandIo } from '../shared/io'

const FLAGS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

const HELP = operatorHelpText(
  {
    usage: 'alttext ocr [--json] FILE...',
    summary: [
      'Reads the text in image files (JPEG, PNG, WebP, GIF, AVIF, TIFF) with the OCR built into the service,',
      'as the service reads each image, and prints it: one line per line of text, in reading order (with',
      'several files, each after a line `==> FILE <==`). Nothing printed: the image shows no text. Runs in',
      'this process; needs no service and no network.',
    ].join('\n'),
    options: [
      {
        flag: '--json',
        meaning: 'one JSON line per file: {file, ms, read: {text, lines: [{text, confidence, box: {x, y, width, height}}], coverage} or null, error?}',
      },
    ],
    notes: ['Exit codes: 0 every file read (text or none); 1 a file could not be read; 2 bad arguments.'],
    examples: ['alttext ocr slide.png', 'ALTTEXT_OCR_MODELS=/opt/ocr/cyrillic alttext ocr --json poster.jpg flyer.png'],
  },
  CONFIG_VARIABLES.filter((variable) => variable.name === 'ALTTEXT_OCR_MODELS'),
)

export async function run(argv: string[], io: CommandIo): Promise<number> {
  let parsed: ReturnType<typeof parseCommandArgs<typeof FLAGS>>
  let modelsDir: string | undefined
  try {
    parsed = parseCommandArgs(argv, FLAGS)
    if (!parsed.values.help && parsed.positionals.length === 0) throw new UsageError('give one or more image files')
    modelsDir = ocrModelsDir(io.env)
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof ConfigError)) throw error
    io.stderr.write(`alttext ocr: ${error.message}\nRun \`alttext ocr --help\` for the options.\n`)
    return EXIT.usage
  }
  if (parsed.values.help) {
    io.stdout.write(`${HELP}\n`)
    return EXIT.ok
  }
  const reader = createTextReader({ modelsDir })
  const several = parsed.positionals.length > 1
  let failed = false
  try {
    for (const name of parsed.positionals) {
      const started = performance.now()
      let read: ImageText | null = null
      let error: string | undefined
      try {
        read = await reader.read(readFileSync(resolve(io.cwd, name)), new AbortController().signal)
      } catch (caught) {
        error = (caught as NodeJS.ErrnoException).code === 'ENOENT' ? `cannot read ${name}: ENOENT` : caught instanceof Error ? caught.message : String(caught)
        failed = true
      }
      const ms = Math.round(performance.now() - started)
      if (parsed.values.json) io.stdout.write(`${JSON.stringify({ file: name, ms, read, ...(error ? { error } : {}) })}\n`)
      else {
        if (several) io.stdout.write(`==> ${name} <==\n`)
        if (read) io.stdout.write(`${read.text}\n`)
      }
      if (error) io.stderr.write(`alttext ocr: ${name}: ${error}\n`)
    }
  } finally {
    await reader.close()
  }
  return failed ? EXIT.failed : EXIT.ok
}
