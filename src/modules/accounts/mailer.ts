// Outgoing mail. SMTP when ALTTEXT_SMTP_URL is set; otherwise the operator's log (air-gapped sites).
import nodemailer from 'nodemailer'
import type { Logger } from '../../shared/logger'

export type Mail = { to: string; subject: string; text: string }

export interface Mailer {
  readonly kind: 'smtp' | 'log'
  send(mail: Mail, logFields?: Record<string, unknown>): Promise<void>
  close(): void
}

export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpUrl, { from })
  return {
    kind: 'smtp',
    async send(mail) {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text })
    },
    close: () => transport.close(),
  }
}

/**
 * Connects to the relay, says EHLO (and STARTTLS and logs in, as the URL asks), and hangs up without
 * sending: `alttext doctor`'s check. Rejects with the relay's or the network's reason.
 */
export async function verifySmtp(smtpUrl: string, timeoutMs: number): Promise<void> {
  const transport = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs })
  try {
    await transport.verify()
  } finally {
    transport.close()
  }
}

/** Without a relay the mail is not sent; the fields the operator needs (e.g. the reset link) are logged. */
export function createLogMailer(logger: Logger): Mailer {
  return {
    kind: 'log',
    async send(mail, logFields) {
      logger.warn('mail not sent (no ALTTEXT_SMTP_URL); delivering to the operator log', { to: mail.to, subject: mail.subject, ...logFields })
    },
    close: () => {},
  }
}
