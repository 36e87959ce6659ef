#!/usr/bin/env bun
// The `alttext` command: serve (default), the commands of src/cli/commands.ts, --help, --version.
// The app is loaded only to serve: the other commands and --help start in a fraction of the time.
import { getPriority, setPriority } from 'node:os'
import type { startService } from './app'
import { COMMANDS } from './cli/commands'
import { variableLine } from './cli/shared/args'
import { appender, type CommandIo } from './cli/shared/io'
import { CONFIG_VARIABLES, ConfigError, loadConfig } from './config'
import { createLogger, flushLogs } from './shared/logger'
import { VERSION, versionLine } from './version'

function help(): string {
  const width = Math.max(...CONFIG_VARIABLES.map((v) => v.name.length))
  return [
    `alttext ${VERSION}: self-hosted WCAG alt text from a local vision model`,
    '',
    'Usage:',
    '  alttext [serve]     start the HTTP service (the default)',
    ...Object.entries(COMMANDS).map(([name, entry]) => `  alttext ${name.padEnd(11)} ${entry.summary}`),
    '  alttext --help      show this help',
    '  alttext --version   print the version, its commit and build date',
    '',
    'Each command has its own help: alttext COMMAND --help',
    '',
    'Configuration (environment variables):',
    ...CONFIG_VARIABLES.map((v) => variableLine(v, width)),
    '',
    'API reference: http://<host>:<port>/docs   OpenAPI: /openapi.json   Errors: /docs/errors',
  ].join('\n')
}

/** The process's own environment, streams, folder, clock and signals: handed to a command here only. */
function processIo(): CommandIo {
  return {
    env: process.env,
    // Written at once (write(2)): all of it is out when the command exits, or when it is killed next.
    stdout: { write: appender(1), isTTY: process.stdout.isTTY },
    stderr: {
      write: appender(2),
      isTTY: process.stderr.isTTY,
      // The terminal's width now, for the progress line: it may change during a run.
      get columns() {
        return process.stderr.columns
      },
    },
    cwd: process.cwd(),
    clock: Date.now,
    interrupts: {
      // Only while a command listens does Ctrl-C not end the process.
      listen(listener) {
        process.on('SIGINT', listener)
        process.on('SIGTERM', listener)
        return () => {
          process.off('SIGINT', listener)
          process.off('SIGTERM', listener)
        }
      },
    },
    lowerPriority(niceness) {
      if (getPriority() < niceness) setPriority(niceness)
    },
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  if (command === '--help' || command === '-h' || command === 'help') {
    console.log(help())
    return
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    console.log(versionLine())
    return
  }
  const entry = command === undefined ? undefined : COMMANDS[command]
  if (entry) {
    entry
      .load()
      .then((module) => module.run(rest, processIo()))
      .then(
        (code) => process.exit(code),
        (error: unknown) => {
          console.error(`alttext ${command}: ${error instanceof Error ? error.message : String(error)}`)
          process.exit(1)
        },
      )
    return
  }
  if ((command !== undefined && command !== 'serve') || rest.length > 0) {
    console.error(`alttext: unknown command "${argv.join(' ')}"\n\n${help()}`)
    process.exit(2)
  }

  const logger = createLogger()
  let config: ReturnType<typeof loadConfig>
  try {
    config = loadConfig(process.env)
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`alttext: bad configuration: ${error.message}`)
      process.exit(2)
    }
    throw error
  }

  let service: ReturnType<typeof startService>
  try {
    const app = await import('./app')
    // PostgreSQL is connected to and migrated before the service is built; the service owns it from then on.
    service = app.startService(config, { logger, store: await app.openStore(config) })
  } catch (error) {
    const raw = error instanceof Error ? error.message : String(error)
    // The store names the file; the operator also needs the variable that chose it.
    const message = raw.includes(config.dbPath) ? `ALTTEXT_DB: ${raw}` : raw
    logger.error('start-up failed', { error: message })
    flushLogs()
    console.error(`alttext: cannot start: ${message}`)
    process.exit(1)
  }

  const shutdown = (signal: string) => {
    logger.info('shutting down', { signal })
    const forced = setTimeout(() => {
      logger.error('shutdown took too long; exiting')
      process.exit(1)
    }, 20_000)
    forced.unref()
    service.stop().then(
      () => {
        flushLogs()
        process.exit(0)
      },
      (error) => {
        logger.error('shutdown failed', { error: String(error) })
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))
}

void main(process.argv.slice(2))
