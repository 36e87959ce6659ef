// The mail check of `alttext doctor`: the SMTP relay of ALTTEXT_SMTP_URL answers and takes its login. The
// relay is shown as host and port only: the URL may carry a password.
import type { Config } from '../../../config'
import { verifySmtp } from '../../../modules/accounts/mailer'
import { type CheckResult, errorText, result } from '../result'

export async function mailCheck(config: Config, timeoutMs: number): Promise<CheckResult> {
  const name = 'mail (SMTP)'
  if (!config.smtpUrl) return result('mail', name, 'skip', "ALTTEXT_SMTP_URL is not set: password-reset links go to the service's log")
  const url = new URL(config.smtpUrl)
  const secure = url.protocol === 'smtps:'
  const relay = `${url.hostname}:${url.port || (secure ? 465 : 587)}`
  try {
    await verifySmtp(config.smtpUrl, timeoutMs)
    return result('mail', name, 'pass', `${relay} answered EHLO${url.username ? ' and accepted the login' : ''}`)
  } catch (error) {
    // Its message may quote the relay's answer, never the URL's password.
    return result(
      'mail',
      name,
      'fail',
      `${relay}: ${errorText(error)}`,
      'check ALTTEXT_SMTP_URL: host, port, smtp:// (STARTTLS) or smtps:// (TLS from the start), user and password',
    )
  }
}
