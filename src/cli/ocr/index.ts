// `alttext ocr FILE`: the text the service's built-in OCR reads in an image file, in reading order, or
// with --json every line with its confidence and box. For operators checking the OCR (a model folder of
// ALTTEXT_OCR_MODELS, a platform) and for the smoke test of the compiled binary; no service, no network.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { CONFIG_VARIABLES, ConfigError, ocrModelsDir } from '../../config'
import { createTextReader } from '../../ocr'
import { EXIT, operatorHelpText, parseCommandArgs, UsageError } from '../shared/args'
import type { CommandIo } from '../shared/io'

const FLAGS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

const HELP = operatorHelpText(
  {
    usage: 'alttext ocr [--json] FILE',
    summary: [
      'Reads the text in an image file (JPEG, PNG, WebP, GIF, AVIF, TIFF) with the OCR built into the service,',
      'as the service reads each image, and prints it: one line per line of text, in reading order. Nothing',
      'printed: the image shows no text. Runs in this process; needs no service and no network.',
    ].join('\n'),
    options: [{ flag: '--json', meaning: 'print {text, lines: [{text, confidence, box: {x, y, width, height}}], coverage}, or null' }],
    notes: ['Exit codes: 0 read (text or none); 1 the image could not be read; 2 bad arguments.'],
    examples: ['alttext ocr slide.png', 'ALTTEXT_OCR_MODELS=/opt/ocr/cyrillic alttext ocr --json poster.jpg'],
  },
  CONFIG_VARIABLES.filter((variable) => variable.name === 'ALTTEXT_OCR_MODELS'),
)

export async function run(argv: string[], io: CommandIo): Promise<number> {
  let parsed: ReturnType<typeof parseCommandArgs<typeof FLAGS>>
  let modelsDir: string | undefined
  try {
    parsed = parseCommandArgs(argv, FLAGS)
    if (!parsed.values.help && parsed.positionals.length !== 1) throw new UsageError('give one image file')
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
  const file = resolve(io.cwd, parsed.positionals[0]!)
  let bytes: Uint8Array
  try {
    bytes = readFileSync(file)
  } catch (error) {
    io.stderr.write(`alttext ocr: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}\n`)
    return EXIT.failed
  }
  const reader = createTextReader({ modelsDir })
  try {
    const text = await reader.read(bytes, new AbortController().signal)
    if (parsed.values.json) io.stdout.write(`${JSON.stringify(text)}\n`)
    else if (text) io.stdout.write(`${text.text}\n`)
    return EXIT.ok
  } catch (error) {
    io.stderr.write(`alttext ocr: ${error instanceof Error ? error.message : String(error)}\n`)
    return EXIT.failed
  } finally {
    await reader.close()
  }
}
