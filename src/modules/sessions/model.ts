import { z } from 'zod'
import { SESSION_IDLE_HOURS, SESSION_MAX_DAYS } from '../../shared/limits'
import { PlanName } from '../keys/model'

const Timestamp = z.iso.datetime()
const EmailVerified = z.boolean().meta({
  description:
    'false while the account has not followed the link mailed to its address: until then its session and keys answer 403 `email_not_verified` to everything but `POST /api/verify-email/resend`.',
})
const IDLE = `${SESSION_IDLE_HOURS} hours without a request end it sooner.`

export const SignedInResponse = z
  .object({
    email: z.email(),
    plan: PlanName,
    expires_at: Timestamp.meta({ description: `When the session ends at the latest (sign-in + ${SESSION_MAX_DAYS} days), ISO 8601. ${IDLE}` }),
    email_verified: EmailVerified,
  })
  .meta({ id: 'SignedIn' })

export const SessionResponse = z
  .object({
    email: z.email(),
    plan: PlanName,
    created_at: Timestamp.meta({ description: 'When this session signed in, ISO 8601.' }),
    expires_at: Timestamp.meta({ description: `When the session ends at the latest (sign-in + ${SESSION_MAX_DAYS} days), ISO 8601. ${IDLE}` }),
    email_verified: EmailVerified,
  })
  .meta({ id: 'Session' })

export const EndedSessionsResponse = z
  .object({ ended: z.number().int().nonnegative().meta({ description: 'Sessions ended, this one included.' }) })
  .meta({ id: 'EndedSessions' })
