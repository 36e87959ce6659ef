// HTTP routes of organisations: the organisation, its members, invitations, keys, activity log and webhook. Routes
// under /api/orgs/:id act in that organisation (the auth macro: a non-member's is 404); `role` says who may.
import { Elysia } from 'elysia'
import { type Body, routeDetail, type SuccessDoc } from '../../http/openapi-doc'
import type { ErrorCode } from '../../shared/errors'
import type { authPlugin } from '../auth'
import { KeyListResponse, RevokedKeyResponse } from '../keys/model'
import type { KeysService } from '../keys/service'
import { OrgWebhookBody, OrgWebhookCreatedResponse, OrgWebhookResponse } from '../webhooks/model'
import type { WebhookService } from '../webhooks/service'
import {
  AcceptedInvitationResponse,
  AcceptInvitationBody,
  ActivityExportQuery,
  ActivityQuery,
  ActivityResponse,
  CreateOrgBody,
  DeletedOrgResponse,
  Invitation,
  InvitationListResponse,
  InvitationParams,
  InviteBody,
  MemberListResponse,
  MemberParams,
  Member,
  OrgIdParams,
  OrgKeyParams,
  OrgListResponse,
  OrgResponse,
  RemovedMemberResponse,
  SetRoleBody,
} from './model'
import { actorOf, INVITATION_TTL_DAYS, type OrgsService } from './service'

const ORG = {
  id: 'org_5f0c3e9a1b2d4c6e8f0a1b2c',
  name: 'Docs team',
  personal: false,
  plan: 'free',
  credits: { total: 50, used: 12, remaining: 38 },
  role: 'owner' as const,
  created_at: '2026-11-20T10:00:00.000Z',
}

const detail = (summary: string, operationId: string, description: string, success: SuccessDoc[], errors: ErrorCode[], jsonBody = false) =>
  routeDetail({ summary, operationId, description, tags: ['Organisations'], success, errors, jsonBody })

/** What every route under /api/orgs/:id may answer besides its own. */
const IN_ORG: ErrorCode[] = ['invalid_request', 'org_not_found']

const ORG_WEBHOOK = { url: 'https://example.com/hooks/alttext', created_at: '2026-11-20T10:00:00.000Z' }

export function orgRoutes(orgs: OrgsService, keys: KeysService, authentication: ReturnType<typeof authPlugin>, webhooks: WebhookService, clock: () => number) {
  return new Elysia({ prefix: '/api' })
    .use(authentication)
    .get('/orgs', ({ caller }): Promise<Body<typeof OrgListResponse>> => orgs.list(caller.account), {
      auth: true,
      detail: detail(
        'List your organisations',
        'listOrgs',
        'The organisations you belong to, your personal one first, with your role in each.',
        [{ status: 200, description: 'Your organisations.', schema: OrgListResponse }],
        [],
      ),
    })
    .post(
      '/orgs',
      async ({ caller, body, set }): Promise<Body<typeof OrgResponse>> => {
        const made = await orgs.create(caller.account, body.name)
        set.status = 201
        return made
      },
      {
        auth: true,
        body: CreateOrgBody,
        parse: 'json',
        detail: detail(
          'Create an organisation',
          'createOrg',
          'A new organisation on the free plan, with you as its owner. It owns its plan and credits; invite members with POST /api/orgs/{id}/invitations and make keys for it with POST /api/keys {org_id}.',
          [{ status: 201, description: 'Created.', schema: OrgResponse, example: ORG }],
          ['invalid_request', 'database_busy'],
          true,
        ),
      },
    )
    .get('/orgs/:id', ({ caller }): Promise<Body<typeof OrgResponse>> => orgs.get(caller), {
      auth: true,
      params: OrgIdParams,
      detail: detail(
        'Show an organisation',
        'getOrg',
        'The organisation, its plan and credits this period, and your role.',
        [{ status: 200, description: 'The organisation.', schema: OrgResponse, example: ORG }],
        IN_ORG,
      ),
    })
    .delete('/orgs/:id', ({ caller }): Promise<Body<typeof DeletedOrgResponse>> => orgs.delete(caller), {
      auth: true,
      role: 'owner',
      params: OrgIdParams,
      detail: detail(
        'Delete an organisation',
        'deleteOrg',
        'Owners only. Deletes the organisation with its keys (revoked at once on every replica), suggestions, batches and activity log. A personal organisation cannot be deleted (409 `personal_org`).',
        [{ status: 200, description: 'Deleted.', schema: DeletedOrgResponse, example: { deleted: true, revoked_keys: 3 } }],
        [...IN_ORG, 'forbidden_for_role', 'personal_org', 'database_busy'],
      ),
    })
    .post(
      '/orgs/:id/invitations',
      async ({ caller, body, set }): Promise<Body<typeof Invitation>> => {
        const made = await orgs.invite(caller, body.email, body.role)
        set.status = 201
        return made
      },
      {
        auth: true,
        role: 'admin',
        params: OrgIdParams,
        body: InviteBody,
        parse: 'json',
        detail: detail(
          'Invite a member',
          'inviteMember',
          `Admins. Mails a single-use link that works for ${INVITATION_TTL_DAYS} days; a newer invitation of the same address replaces the older. Inviting an owner needs an owner. The address may have no account yet: registering with it (also where sign-up is closed) and then accepting joins.`,
          [{ status: 201, description: 'Invited; the mail is on its way.', schema: Invitation }],
          [...IN_ORG, 'forbidden_for_role', 'already_member', 'personal_org', 'database_busy'],
          true,
        ),
      },
    )
    .get('/orgs/:id/invitations', ({ caller }): Promise<Body<typeof InvitationListResponse>> => orgs.invitations(caller), {
      auth: true,
      role: 'admin',
      params: OrgIdParams,
      detail: detail(
        'List pending invitations',
        'listInvitations',
        'Admins. Unused, unexpired invitations, newest first.',
        [{ status: 200, description: 'Pending invitations.', schema: InvitationListResponse }],
        [...IN_ORG, 'forbidden_for_role'],
      ),
    })
    .delete('/orgs/:id/invitations/:invitation_id', ({ caller, params }) => orgs.revokeInvitation(caller, params.invitation_id), {
      auth: true,
      role: 'admin',
      params: InvitationParams,
      detail: detail(
        'Withdraw an invitation',
        'revokeInvitation',
        'Admins. The link stops working at once.',
        [{ status: 200, description: 'Withdrawn.' }],
        [...IN_ORG, 'forbidden_for_role', 'not_found', 'database_busy'],
      ),
    })
    .post('/invitations/accept', ({ caller, body }): Promise<Body<typeof AcceptedInvitationResponse>> => orgs.accept(caller, body.token), {
      auth: true,
      body: AcceptInvitationBody,
      parse: 'json',
      detail: detail(
        'Accept an invitation',
        'acceptInvitation',
        'Joins the organisation with the role the invitation names. Signed in, or with a key, of the invited email address. Two accepts at once make one membership.',
        [{ status: 200, description: 'Joined.', schema: AcceptedInvitationResponse }],
        ['invalid_request', 'invalid_invitation', 'invitation_email_mismatch', 'already_member', 'database_busy'],
        true,
      ),
    })
    .get('/orgs/:id/members', ({ caller }): Promise<Body<typeof MemberListResponse>> => orgs.members(caller), {
      auth: true,
      params: OrgIdParams,
      detail: detail(
        'List members',
        'listMembers',
        'Every member with its role, in the order they joined.',
        [{ status: 200, description: 'Members.', schema: MemberListResponse }],
        IN_ORG,
      ),
    })
    .patch('/orgs/:id/members/:account_id', ({ caller, params, body }): Promise<Body<typeof Member>> => orgs.setRole(caller, params.account_id, body.role), {
      auth: true,
      role: 'admin',
      params: MemberParams,
      body: SetRoleBody,
      parse: 'json',
      detail: detail(
        "Change a member's role",
        'setMemberRole',
        "Admins; changing an owner's role, or making one, needs an owner. The member's keys act with the new role at once on every replica. The last owner cannot be demoted (409 `last_owner`).",
        [{ status: 200, description: 'The member as it is now.', schema: Member }],
        [...IN_ORG, 'forbidden_for_role', 'not_found', 'last_owner', 'database_busy'],
        true,
      ),
    })
    .delete(
      '/orgs/:id/members/:account_id',
      ({ caller, params }): Promise<Body<typeof RemovedMemberResponse>> => orgs.removeMember(caller, params.account_id),
      {
        auth: true,
        params: MemberParams,
        detail: detail(
          'Remove a member, or leave',
          'removeMember',
          "Admins remove members (an owner needs an owner); any member may remove itself. The member's keys of the organisation are revoked and its sessions stop acting in it, at once on every replica. The last owner stays (409 `last_owner`).",
          [{ status: 200, description: 'Removed.', schema: RemovedMemberResponse, example: { removed: true, revoked_keys: 1 } }],
          [...IN_ORG, 'forbidden_for_role', 'not_found', 'last_owner', 'personal_org', 'database_busy'],
        ),
      },
    )
    .get('/orgs/:id/keys', ({ caller }): Promise<Body<typeof KeyListResponse>> => keys.listInOrg(caller.org), {
      auth: true,
      role: 'admin',
      params: OrgIdParams,
      detail: detail(
        "List the organisation's keys",
        'listOrgKeys',
        'Admins. Every active key made for the organisation, by any member.',
        [{ status: 200, description: 'Active keys.', schema: KeyListResponse }],
        [...IN_ORG, 'forbidden_for_role'],
      ),
    })
    .delete(
      '/orgs/:id/keys/:prefix',
      ({ caller, params }): Promise<Body<typeof RevokedKeyResponse>> => keys.revokeInOrg(caller.account, caller.org, params.prefix),
      {
        auth: true,
        role: 'admin',
        params: OrgKeyParams,
        detail: detail(
          'Revoke a key of the organisation',
          'revokeOrgKey',
          "Admins. Revokes any member's key made for the organisation.",
          [{ status: 200, description: 'Revoked.', schema: RevokedKeyResponse }],
          [...IN_ORG, 'forbidden_for_role', 'key_not_found', 'database_busy'],
        ),
      },
    )
    .get('/orgs/:id/activity', ({ caller, query }): Promise<Body<typeof ActivityResponse>> => orgs.activity(caller, query), {
      auth: true,
      role: 'admin',
      params: OrgIdParams,
      query: ActivityQuery,
      detail: detail(
        'Read the activity log',
        'listOrgActivity',
        'Admins. Who did what when: members, invitations, roles, keys, plan changes and every decision on a suggestion, newest first, paged with `next_cursor`. Append-only; kept as long as the organisation (at least 400 days).',
        [{ status: 200, description: 'A page of entries.', schema: ActivityResponse }],
        [...IN_ORG, 'forbidden_for_role'],
      ),
    })
    .get(
      '/orgs/:id/activity/export',
      ({ caller, query, set }) => {
        set.headers['content-type'] = query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8'
        set.headers['content-disposition'] = `attachment; filename="alttext-activity-${caller.org.publicId}.${query.format}"`
        return new Response(orgs.exportActivity(caller, query.format, query), { headers: set.headers as Record<string, string> })
      },
      {
        auth: true,
        role: 'admin',
        params: OrgIdParams,
        query: ActivityExportQuery,
        detail: detail(
          'Export the activity log',
          'exportOrgActivity',
          'Admins. The whole log (or `since`…`until`), newest first, as CSV (columns seq, at, actor, action, subject, detail) or a JSON array, for auditors.',
          [{ status: 200, description: 'The log as a file.' }],
          [...IN_ORG, 'forbidden_for_role'],
        ),
      },
    )
    .put(
      '/orgs/:id/webhook',
      ({ caller, body }): Promise<Body<typeof OrgWebhookCreatedResponse>> => webhooks.setOrgWebhook(caller.org, body.url, actorOf(caller, clock())),
      {
        auth: true,
        role: 'admin',
        params: OrgIdParams,
        body: OrgWebhookBody,
        detail: detail(
          'Set the organisation webhook',
          'setOrgWebhook',
          "Admins. Every decision on a suggestion of the organisation (accept, edit, reject, and reopen as `reopened`) is POSTed to `url` as a `suggestion.decided` event, signed and retried exactly as batch webhooks are (`Alttext-Signature`, `Alttext-Delivery`; see GET /api/webhook-deliveries). The URL follows the rules of a batch `webhook_url`. Each PUT makes a new signing secret, shown only now, which replaces the webhook secret of the organisation's account (it signs its batch deliveries too). Events already queued keep their URL.",
          [
            {
              status: 200,
              description: 'Set; the secret is shown only now.',
              schema: OrgWebhookCreatedResponse,
              example: { ...ORG_WEBHOOK, secret: 'whsec_3q2-7wVhZ0m1bXk9T4pLr8sJd6yQe5uFc2nHa0gKiOo' },
            },
          ],
          [...IN_ORG, 'forbidden_for_role', 'database_busy'],
          true,
        ),
      },
    )
    .get('/orgs/:id/webhook', ({ caller }): Promise<Body<typeof OrgWebhookResponse>> => webhooks.orgWebhook(caller.org), {
      auth: true,
      role: 'admin',
      params: OrgIdParams,
      detail: detail(
        'Show the organisation webhook',
        'getOrgWebhook',
        'Admins. Where `suggestion.decided` events go, and since when; never the secret. 404 `not_found` when none is set.',
        [{ status: 200, description: 'The webhook.', schema: OrgWebhookResponse, example: ORG_WEBHOOK }],
        [...IN_ORG, 'forbidden_for_role', 'not_found'],
      ),
    })
    .delete('/orgs/:id/webhook', ({ caller }) => webhooks.deleteOrgWebhook(caller.org, actorOf(caller, clock())), {
      auth: true,
      role: 'admin',
      params: OrgIdParams,
      detail: detail(
        'Remove the organisation webhook',
        'deleteOrgWebhook',
        'Admins. Later decisions queue no event; events queued before are still delivered (or retried) to the URL they were queued for. The signing secret stays (batch webhooks use it).',
        [{ status: 200, description: 'Removed.' }],
        [...IN_ORG, 'forbidden_for_role', 'not_found', 'database_busy'],
      ),
    })
}
