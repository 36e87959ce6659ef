// `alttext describe`: alt text for many images from a running alttext. Reads its arguments and
// configuration, skips what the output file already has, keeps `--concurrency` requests in flight, and
// writes each answer as it arrives. The run owns its signal handlers and the progress reporter: both
// are set up here and removed before it returns.
import { ConfigError, loadClientConfig } from '../../config'
import { plural } from '../../shared/wording'
import { VERSION } from '../../version'
import { EXIT, UsageError } from '../shared/args'
import { createClient, stopReason } from '../shared/client'
import type { CommandIo } from '../shared/io'
import { createProgress } from '../shared/progress'
import { collectItems, sourceKey } from './inputs'
import { HELP, parseDescribeArgs } from './options'
import { openOutput, resultRecord } from './output'
import { createRunControl } from '../shared/run-control'

/** 128 + SIGINT, as shells report a command stopped by Ctrl-C. */
const EXIT_INTERRUPTED = 130

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const fail = (message: string, code: number = EXIT.usage): number => {
    io.stderr.write(`alttext describe: ${message}${code === EXIT.usage ? '\nRun `alttext describe --help` for the options.' : ''}\n`)
    return code
  }
  const { cwd } = io
  let settings: ReturnType<typeof parseDescribeArgs>
  let config: ReturnType<typeof loadClientConfig>
  let items: ReturnType<typeof collectItems>
  let sink: ReturnType<typeof openOutput>
  try {
    settings = parseDescribeArgs(argv, cwd)
    if (settings === 'help') {
      io.stdout.write(`${HELP}\n`)
      return EXIT.ok
    }
    config = loadClientConfig(io.env, { url: settings.url, key: settings.key })
    items = collectItems(settings.inputs, cwd)
    if (items.length === 0) return fail(`no JPEG, PNG, GIF, WebP, AVIF or SVG images found in ${settings.inputs.join(', ')}`)
    sink = openOutput(settings.format, settings.output, settings.restart, cwd, (text) => io.stdout.write(text))
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) return fail(error.message)
    throw error
  }

  const todo = items.filter((item) => !sink.done.has(sourceKey(item.source, cwd)))
  const skipped = items.length - todo.length
  const progress = createProgress({ stream: io.stderr, quiet: settings.quiet, noun: 'image', now: io.clock })
  if (todo.length === 0) {
    sink.close()
    const already = items.length === 1 ? 'the one image already has' : `all ${items.length} images already have`
    if (!settings.quiet) io.stderr.write(`${already} a result in ${settings.output}; nothing to do\n`)
    return EXIT.ok
  }

  let waitNotedUntil = 0
  const client = createClient({
    url: config.url,
    key: config.key,
    userAgent: `alttext-cli/${VERSION} (describe)`,
    onWait: ({ seconds, code }) => {
      // One line per pause, not one per waiting worker.
      if (io.clock() < waitNotedUntil) return
      waitNotedUntil = io.clock() + seconds * 1000
      progress.note(`waiting ${seconds} s (${code}) before sending again`)
    },
  })

  const usage = await client.usage()
  if (!usage.ok) {
    sink.close()
    const why = usage.status === 0 ? usage.message : `${config.url} answered ${usage.status} ${usage.code}: ${usage.message}`
    return fail(`${why}\nNothing was sent. Check --url/ALTTEXT_URL and --key/ALTTEXT_API_KEY.`)
  }
  progress.start(todo.length, skipped)
  if (usage.remaining < todo.length) {
    progress.note(
      `note: ${plural(todo.length, 'image')} to do and ${plural(usage.remaining, 'credit')} left; answers the service has cached are free, the run stops when credits run out`,
    )
  }

  // Ctrl-C once: start nothing new, let running requests finish and be written. Twice: abort them.
  const control = createRunControl(io.interrupts, () => progress.note('interrupted: finishing the requests in flight (Ctrl-C again to stop at once)'))

  let next = 0
  const worker = async () => {
    while (control.stopping === undefined && next < todo.length) {
      const item = todo[next++]!
      const outcome = await client.describeImage(item.input, settings.options, control.signal)
      if (outcome.ok) {
        sink.write(resultRecord(item.source, outcome.body))
        const note = [outcome.body.cached && 'cached', outcome.body.decorative && 'decorative', outcome.body.long_description && 'long description']
          .filter(Boolean)
          .join(', ')
        progress.item(item.source, { ok: true, note })
        continue
      }
      if (outcome.code === 'aborted') continue
      sink.write({ source: item.source, error: { status: outcome.status, code: outcome.code, message: outcome.message } })
      progress.item(item.source, { ok: false, detail: `${outcome.code}: ${outcome.message}` })
      const reason = stopReason(outcome.status, outcome.code)
      if (reason !== undefined && control.stop(reason)) {
        progress.note(`stopping: ${reason}`)
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: Math.min(settings.concurrency, todo.length) }, worker))
  } finally {
    control.dispose()
    sink.close()
  }
  const summary = progress.finish()
  if (control.interrupted) return EXIT_INTERRUPTED
  return summary.failed === 0 && summary.done === summary.total ? EXIT.ok : EXIT.failed
}
