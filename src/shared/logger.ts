// One JSON object per line on stdout. Callers pass fields explicitly, so nothing secret is logged by
// accident: never pass keys, passwords, tokens, request bodies or image bytes.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
export type LogFields = Record<string, unknown>

/** One served request: the access log's line. */
export type AccessLogEntry = { method: string; path: string; status: number; durationMs: number; requestId: string; client: string }

export interface Logger {
  /** The access log: the same line as `info('request', {...})`, formatted without an intermediate object. */
  access(entry: AccessLogEntry): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
}

export type LogSink = (line: string) => void

/**
 * Lines are gathered and written once per event-loop turn: one write per request costs more than the
 * request itself under load. `flushLogs` empties the buffer at once (shutdown, fatal errors).
 */
let buffered: string[] = []
let scheduled = false
// Bun's native buffered writer: far cheaper than process.stdout's stream machinery.
const stdout = Bun.stdout.writer()
export function flushLogs(): void {
  scheduled = false
  if (buffered.length === 0) return
  const text = `${buffered.join('\n')}\n`
  buffered = []
  stdout.write(text)
  void stdout.flush()
}
const stdoutSink: LogSink = (line) => {
  buffered.push(line)
  if (buffered.length >= 512) return flushLogs()
  if (!scheduled) {
    scheduled = true
    setImmediate(flushLogs)
  }
}
process.on('exit', flushLogs)

// Many lines share a millisecond under load; format its time once.
let lastMs = 0
let lastIso = ''
function nowIso(): string {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastMs = ms
    lastIso = new Date(ms).toISOString()
  }
  return lastIso
}

export function createLogger(sink: LogSink = stdoutSink): Logger {
  const write = (level: LogLevel, msg: string, fields?: LogFields) => sink(JSON.stringify({ time: nowIso(), level, msg, ...fields }))
  return {
    // Every request writes one: a template with only the free-text fields escaped.
    access: (e) =>
      sink(
        `{"time":"${nowIso()}","level":"info","msg":"request","method":${JSON.stringify(e.method)},"path":${JSON.stringify(e.path)},"status":${e.status},"duration_ms":${Math.round(e.durationMs * 100) / 100},"request_id":${JSON.stringify(e.requestId)},"client":${JSON.stringify(e.client)}}`,
      ),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  }
}

/** Describes an unexpected error for the log without request data. */
export function describeError(error: unknown): LogFields {
  if (error instanceof Error) return { error: error.message, error_name: error.name, stack: error.stack?.split('\n').slice(0, 6).join('\n') }
  return { error: String(error) }
}
