// What the registration tests share: the verification links a service mailed.
import { waitUntil } from '../support/service'
import type { SmtpCapture } from '../support/smtp'

const LINK = /\/verify-email\?token=[\w-]+/

/** The path of the `nth` verification link (1: the first) mailed to `email`, once it has arrived. */
export async function verificationPath(smtp: SmtpCapture, email: string, nth = 1): Promise<string> {
  const links = () => smtp.messages.filter((m) => m.to.includes(email) && LINK.test(m.text))
  await waitUntil(() => links().length >= nth, `verification mail ${nth} to ${email}`)
  return LINK.exec(links()[nth - 1]!.text)![0]
}

/** The token of the `nth` verification link mailed to `email`. */
export async function verificationToken(smtp: SmtpCapture, email: string, nth = 1): Promise<string> {
  return new URLSearchParams((await verificationPath(smtp, email, nth)).split('?')[1]).get('token')!
}
