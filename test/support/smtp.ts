// A real SMTP server on loopback that captures what the service sends, for tests.
// Plain SMTP only (no STARTTLS), so a `smtp://127.0.0.1:PORT` nodemailer URL transport
// talks to it without any TLS options.
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

export interface CapturedMail {
  /** Envelope sender (MAIL FROM). */
  from: string
  /** Envelope recipients (RCPT TO), in order. */
  to: string[]
  /** Subject header, unfolded and with RFC 2047 encoded words decoded. */
  subject: string
  /** First text/plain part, transfer-decoded and charset-decoded, line endings as "\n". */
  text: string
  /** First text/html part, decoded like `text`; undefined when the message has none. */
  html: string | undefined
  /** Top-level headers, names lower-cased, values unfolded (last occurrence wins). */
  headers: Record<string, string>
  /** The message exactly as received after DATA (CRLF line endings, dot-unstuffed). */
  raw: string
  /** Username from AUTH, if the client authenticated. */
  authUser: string | undefined
  receivedAt: Date
}

export interface SmtpCapture {
  /** e.g. smtp://127.0.0.1:PORT — usable as a nodemailer transport URL. */
  url: string
  port: number
  /** Accepted messages, in arrival order. */
  messages: CapturedMail[]
  /** Messages that `failNext` made the server refuse, in arrival order. */
  rejected: CapturedMail[]
  /**
   * Resolves with the first accepted message (already captured or arriving later) that
   * matches `predicate`; rejects after `timeoutMs` or when the capture stops.
   */
  waitForMail(predicate?: (mail: CapturedMail) => boolean, timeoutMs?: number): Promise<CapturedMail>
  /**
   * Refuse the next `count` messages at end of DATA with `responseCode`
   * (default 451, a transient failure; pass e.g. 550 for a permanent one).
   */
  failNext(count?: number, responseCode?: number): void
  stop(): Promise<void>
}

interface MailWaiter {
  predicate: (mail: CapturedMail) => boolean
  resolve: (mail: CapturedMail) => void
  reject: (error: Error) => void
  timer: ReturnType<typeof setTimeout>
}

interface SimulatedFailure extends Error {
  responseCode: number
}

export async function startSmtpCapture(): Promise<SmtpCapture> {
  const messages: CapturedMail[] = []
  const rejected: CapturedMail[] = []
  let waiters: MailWaiter[] = []
  let failuresLeft = 0
  let failureResponseCode = 451
  let stopped = false

  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    hideSTARTTLS: true,
    authOptional: true,
    // Credentials in the service's SMTP URL must still work without TLS on loopback.
    allowInsecureAuth: true,
    logger: false,
    // Otherwise every connection triggers a reverse-DNS query off the loopback.
    disableReverseLookup: true,
    // Backstop only: stop() closes live connections itself.
    closeTimeout: 1000,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username ?? 'anonymous' })
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('error', (error: Error) => callback(error))
      // The stream must be drained before answering, whether we accept or refuse.
      stream.on('end', () => {
        const raw = Buffer.concat(chunks)
        const envelope = session.envelope
        const mail = parseMessage(raw, {
          from: envelope.mailFrom ? envelope.mailFrom.address : '',
          to: envelope.rcptTo.map((recipient) => recipient.address),
          authUser: typeof session.user === 'string' ? session.user : undefined,
        })

        if (failuresLeft > 0) {
          failuresLeft--
          rejected.push(mail)
          const failure = new Error('Simulated delivery failure (test capture)') as SimulatedFailure
          failure.responseCode = failureResponseCode
          callback(failure)
          return
        }

        messages.push(mail)
        callback(null, 'Captured')
        notifyWaiters(mail)
      })
    },
  })

  function notifyWaiters(mail: CapturedMail): void {
    const stillWaiting: MailWaiter[] = []
    for (const waiter of waiters) {
      if (waiter.predicate(mail)) {
        clearTimeout(waiter.timer)
        waiter.resolve(mail)
      } else {
        stillWaiting.push(waiter)
      }
    }
    waiters = stillWaiting
  }

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.server.off('error', reject)
      resolve()
    })
  })
  const port = (server.server.address() as AddressInfo).port

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    rejected,

    waitForMail(predicate = () => true, timeoutMs = 5000) {
      const existing = messages.find(predicate)
      if (existing) return Promise.resolve(existing)
      if (stopped) return Promise.reject(new Error('SMTP capture is stopped'))
      return new Promise<CapturedMail>((resolve, reject) => {
        const waiter: MailWaiter = {
          predicate,
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters = waiters.filter((other) => other !== waiter)
            reject(new Error(`no matching mail within ${timeoutMs} ms (${messages.length} accepted, ${rejected.length} refused)`))
          }, timeoutMs),
        }
        waiters.push(waiter)
      })
    },

    failNext(count = 1, responseCode = 451) {
      if (responseCode < 400 || responseCode > 599) {
        throw new RangeError(`failNext needs a 4xx/5xx SMTP code, got ${responseCode}`)
      }
      failuresLeft = count
      failureResponseCode = responseCode
    },

    async stop() {
      if (stopped) return
      stopped = true
      for (const waiter of waiters) {
        clearTimeout(waiter.timer)
        waiter.reject(new Error('SMTP capture stopped while waiting for mail'))
      }
      waiters = []
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      // Hang up on idle/pooled clients now instead of waiting out closeTimeout.
      for (const connection of [...server.connections]) connection.close()
      await closed
    },
  }
}

// ---------------------------------------------------------------------------
// Minimal MIME parsing (mailparser is not a dependency). Works on "binary" strings,
// one char per byte, so 8bit bodies survive until their charset is applied.

interface MessageEnvelope {
  from: string
  to: string[]
  authUser: string | undefined
}

interface MimeEntity {
  headers: Record<string, string>
  body: string
}

function parseMessage(rawBytes: Buffer, envelope: MessageEnvelope): CapturedMail {
  const binary = rawBytes.toString('latin1')
  const root = splitEntity(binary)
  const text = findPart(root, 'text/plain')
  const html = findPart(root, 'text/html')
  return {
    from: envelope.from,
    to: envelope.to,
    subject: decodeHeaderValue(root.headers.subject ?? ''),
    text: text === undefined ? '' : text,
    html,
    headers: Object.fromEntries(Object.entries(root.headers).map(([name, value]) => [name, decodeHeaderValue(value)])),
    raw: rawBytes.toString('utf8'),
    authUser: envelope.authUser,
    receivedAt: new Date(),
  }
}

function splitEntity(binary: string): MimeEntity {
  const match = /\r?\n\r?\n/.exec(binary)
  const headerBlock = match ? binary.slice(0, match.index) : binary
  const body = match ? binary.slice(match.index + match[0].length) : ''
  const headers: Record<string, string> = {}
  // Unfold continuation lines (leading whitespace) before splitting name: value.
  for (const line of headerBlock.replace(/\r?\n(?=[ \t])/g, '').split(/\r?\n/)) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { headers, body }
}

interface ContentType {
  mediaType: string
  params: Record<string, string>
}

function parseContentType(value: string | undefined): ContentType {
  const [typePart = '', ...paramParts] = (value ?? 'text/plain').split(';')
  const params: Record<string, string> = {}
  for (const part of paramParts) {
    const equals = part.indexOf('=')
    if (equals <= 0) continue
    const name = part.slice(0, equals).trim().toLowerCase()
    let paramValue = part.slice(equals + 1).trim()
    if (paramValue.startsWith('"') && paramValue.endsWith('"')) paramValue = paramValue.slice(1, -1)
    params[name] = paramValue
  }
  return { mediaType: typePart.trim().toLowerCase() || 'text/plain', params }
}

/** Depth-first search for the first part of `wantedType`, returned decoded. */
function findPart(entity: MimeEntity, wantedType: string): string | undefined {
  const contentType = parseContentType(entity.headers['content-type'])
  if (contentType.mediaType.startsWith('multipart/')) {
    const boundary = contentType.params.boundary
    if (!boundary) return undefined
    for (const child of splitMultipart(entity.body, boundary)) {
      const found = findPart(splitEntity(child), wantedType)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (contentType.mediaType !== wantedType) return undefined
  if (/^attachment/i.test(entity.headers['content-disposition'] ?? '')) return undefined
  const bytes = decodeTransferEncoding(entity.body, entity.headers['content-transfer-encoding'])
  return decodeCharset(bytes, contentType.params.charset).replace(/\r\n/g, '\n')
}

function splitMultipart(body: string, boundary: string): string[] {
  const parts: string[] = []
  const delimiter = `--${boundary}`
  const lines = body.split(/\r?\n/)
  let current: string[] | null = null
  for (const line of lines) {
    if (line === `${delimiter}--`) break
    if (line === delimiter) {
      if (current) parts.push(current.join('\r\n'))
      current = []
      continue
    }
    current?.push(line)
  }
  if (current) parts.push(current.join('\r\n'))
  return parts
}

function decodeTransferEncoding(body: string, encoding: string | undefined): Uint8Array {
  switch ((encoding ?? '7bit').trim().toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64')
    case 'quoted-printable':
      return decodeQuotedPrintable(body)
    default:
      return Buffer.from(body, 'latin1')
  }
}

function decodeQuotedPrintable(body: string): Uint8Array {
  // Soft line breaks ("=" at end of line) join lines; trailing whitespace is not content.
  const joined = body.replace(/[ \t]+(?=\r?\n)/g, '').replace(/=\r?\n/g, '')
  const bytes: number[] = []
  for (let i = 0; i < joined.length; i++) {
    const char = joined[i]
    const hex = joined.slice(i + 1, i + 3)
    if (char === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16))
      i += 2
    } else {
      bytes.push(joined.charCodeAt(i) & 0xff)
    }
  }
  return Uint8Array.from(bytes)
}

function decodeCharset(bytes: Uint8Array, charset: string | undefined): string {
  try {
    // Bun types the label as a closed union; any WHATWG label works at runtime.
    return new TextDecoder((charset ?? 'utf-8') as ConstructorParameters<typeof TextDecoder>[0]).decode(bytes)
  } catch {
    return new TextDecoder('utf-8').decode(bytes) // unknown label: best effort
  }
}

/** Raw 8-bit header bytes are taken as UTF-8 (RFC 6532), then encoded words are decoded. */
function decodeHeaderValue(binaryValue: string): string {
  return decodeEncodedWords(Buffer.from(binaryValue, 'latin1').toString('utf8'))
}

/** RFC 2047 `=?charset?B|Q?...?=` words; whitespace between adjacent words is dropped. */
function decodeEncodedWords(value: string): string {
  const encodedWord = /=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g
  return value.replace(/(\?=)\s+(?==\?)/g, '$1').replace(encodedWord, (_whole, charset: string, encoding: string, payload: string) => {
    const bytes = encoding.toUpperCase() === 'B' ? Buffer.from(payload, 'base64') : decodeQuotedPrintable(payload.replace(/_/g, ' '))
    return decodeCharset(bytes, charset.replace(/\*.*$/, '')) // drop RFC 2231 language
  })
}
