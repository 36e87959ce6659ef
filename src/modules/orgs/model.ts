import { z } from 'zod'
import { Email } from '../accounts/model'
import { ACTIVITY_ACTIONS, ROLES } from '../../store/contract'
import { OrgId } from './ids'

const Timestamp = z.iso.datetime().meta({ description: 'ISO 8601 UTC' })

export const MAX_ORG_NAME_CHARS = 100

export const RoleName = z.enum(ROLES).meta({
  description: 'owner > admin > reviewer > author; each may do what the ones after it may.',
  examples: ['reviewer'],
})

export const OrgIdParams = z.object({ id: OrgId })

export const CreateOrgBody = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(MAX_ORG_NAME_CHARS, `must be at most ${MAX_ORG_NAME_CHARS} characters`),
  })
  .meta({ id: 'CreateOrgRequest', examples: [{ name: 'Docs team' }] })

const Credits = z.object({ total: z.number().int(), used: z.number().int(), remaining: z.number().int() })

export const OrgResponse = z
  .object({
    id: OrgId,
    name: z.string(),
    personal: z.boolean().meta({ description: "Every account's own organisation: one member, cannot be deleted." }),
    plan: z.string(),
    credits: Credits,
    role: RoleName.meta({ description: 'Your role in it.' }),
    created_at: Timestamp,
  })
  .meta({ id: 'Org' })

export const OrgListResponse = z
  .object({
    orgs: z.array(
      z.object({ id: OrgId, name: z.string(), personal: z.boolean(), role: RoleName, plan: z.string(), joined_at: Timestamp }).meta({ id: 'OrgMembership' }),
    ),
  })
  .meta({ id: 'OrgList' })

export const DeletedOrgResponse = z.object({ deleted: z.literal(true), revoked_keys: z.number().int() }).meta({ id: 'DeletedOrg' })

export const InviteBody = z
  .object({ email: Email, role: RoleName })
  .meta({ id: 'InviteRequest', examples: [{ email: 'editor@example.com', role: 'reviewer' }] })

export const Invitation = z
  .object({ id: z.number().int(), email: z.string(), role: RoleName, created_at: Timestamp, expires_at: Timestamp })
  .meta({ id: 'Invitation' })

export const InvitationListResponse = z.object({ invitations: z.array(Invitation) }).meta({ id: 'InvitationList' })

export const InvitationParams = z.object({ id: OrgId, invitation_id: z.coerce.number().int().positive() })

export const InvitationToken = z
  .string()
  .trim()
  .regex(/^[0-9a-f]{64}$/u, 'must be the token of the mailed link: 64 hex characters')

export const AcceptInvitationBody = z.object({ token: InvitationToken }).meta({ id: 'AcceptInvitationRequest' })

export const AcceptedInvitationResponse = z.object({ org: z.object({ id: OrgId, name: z.string(), role: RoleName }) }).meta({ id: 'AcceptedInvitation' })

export const Member = z.object({ account_id: z.number().int(), email: z.string(), role: RoleName, joined_at: Timestamp }).meta({ id: 'Member' })

export const MemberListResponse = z.object({ members: z.array(Member) }).meta({ id: 'MemberList' })

export const MemberParams = z.object({ id: OrgId, account_id: z.coerce.number().int().positive() })

export const SetRoleBody = z.object({ role: RoleName }).meta({ id: 'SetRoleRequest', examples: [{ role: 'admin' }] })

export const RemovedMemberResponse = z.object({ removed: z.literal(true), revoked_keys: z.number().int() }).meta({ id: 'RemovedMember' })

export const MAX_ACTIVITY_PAGE = 200

/** A time of the log's range: ISO 8601 (a date, or a date and time); no pattern in the document, which would be 256 characters. */
const RangeTime = (what: string) =>
  z
    .string()
    .trim()
    .max(40)
    .refine(
      (text) => /^\d{4}-\d{2}-\d{2}/u.test(text) && Number.isFinite(Date.parse(text)),
      'must be an ISO 8601 date or time, such as 2026-11-01 or 2026-11-01T00:00:00Z',
    )
    .optional()
    .meta({ description: what, examples: ['2026-11-01T00:00:00Z'] })

export const ActivityQuery = z.object({
  cursor: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/u, 'must be the next_cursor of the previous page')
    .optional(),
  limit: z.coerce.number().int().min(1).max(MAX_ACTIVITY_PAGE).optional(),
  since: RangeTime('Entries at or after this time (ISO 8601).'),
  until: RangeTime('Entries before this time (ISO 8601).'),
})

export const ActivityEntry = z
  .object({
    seq: z.number().int(),
    at: Timestamp,
    actor: z.string().nullable().meta({ description: "The member's email; null for the operator (alttext admin) or the service." }),
    action: z.enum(ACTIVITY_ACTIONS),
    subject: z.string().nullable(),
    detail: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'ActivityEntry' })

export const ActivityResponse = z.object({ entries: z.array(ActivityEntry), next_cursor: z.string().nullable() }).meta({ id: 'ActivityPage' })

export const ActivityExportQuery = z.object({
  format: z.enum(['csv', 'json']).default('csv'),
  since: RangeTime('Entries at or after this time (ISO 8601).'),
  until: RangeTime('Entries before this time (ISO 8601).'),
})

export const OrgKeyParams = z.object({ id: OrgId, prefix: z.string().trim().min(1).max(64) })
