// HTTP routes of the review queue, in the organisation the caller acts in (its key's, or the console's
// choice). Authors submit and read; reviewers decide (the role macro); another organisation's is a 404.
import { Elysia } from 'elysia'
import { type Body, jsonSchema, routeDetail, type SuccessDoc } from '../../http/openapi-doc'
import type { ErrorCode } from '../../shared/errors'
import { GENERATION_ERRORS } from '../alt-text/model'
import { readImageRequest, uploadCollector } from '../alt-text/upload'
import type { authPlugin } from '../auth'
import {
  AcceptBody,
  BulkAcceptBody,
  BulkAcceptResponse,
  CreateSuggestionBody,
  CreateSuggestionUploadBody,
  MAX_SUGGESTED_ALT_CHARS,
  MAX_TARGET_CHARS,
  RejectBody,
  Suggestion,
  SuggestionListQuery,
  SuggestionListResponse,
  SuggestionParams,
} from './model'
import type { SuggestionsService } from './service'

/** Reads its own body, as POST /api/alt-text does (see http/body.ts): the image upload, after authentication. */
export const SUGGESTION_BODY_ROUTES = ['POST /api/suggestions']

const detail = (summary: string, operationId: string, description: string, success: SuccessDoc[], errors: ErrorCode[], jsonBody = false) =>
  routeDetail({ summary, operationId, description, tags: ['Suggestions'], success, errors, jsonBody })

const DECIDE_ERRORS: ErrorCode[] = ['invalid_request', 'forbidden_for_role', 'suggestion_not_found', 'already_decided', 'org_not_found', 'database_busy']

export function suggestionRoutes(suggestions: SuggestionsService, authentication: ReturnType<typeof authPlugin>) {
  const collector = uploadCollector()
  return new Elysia({ prefix: '/api' })
    .use(authentication)
    .post(
      '/suggestions',
      async ({ caller, request, set }): Promise<Body<typeof Suggestion>> => {
        const input = await readImageRequest(request, CreateSuggestionBody, { collector, place: (signal) => suggestions.uploadPlace(caller, signal) })
        const made = await suggestions.create(caller, input, request.signal)
        set.status = 201
        return made
      },
      {
        auth: true,
        role: 'author',
        detail: {
          ...detail(
            'Submit a suggestion',
            'createSuggestion',
            `Puts a proposed alt text for one image in one place into the organisation's review queue, pending. The image comes as for POST /api/alt-text (\`image_url\`, \`image_base64\` or multipart with the file in \`image\` and \`target\` as JSON text); \`target\` names where the alt text goes (\`kind\`, \`ref\`, optional \`site\` and \`fingerprint\`, each at most ${MAX_TARGET_CHARS} characters). With \`proposed_alt\` (at most ${MAX_SUGGESTED_ALT_CHARS} characters) only the WCAG checks run and nothing is charged; without it the service writes one as POST /api/alt-text would (one credit, cached answers free; the options of that route apply). A small thumbnail is kept for the review page.`,
            [{ status: 201, description: 'Queued.', schema: Suggestion }],
            [...GENERATION_ERRORS, 'org_not_found'],
            true,
          ),
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: jsonSchema(CreateSuggestionBody, 'input') },
              'multipart/form-data': { schema: jsonSchema(CreateSuggestionUploadBody, 'input') },
            },
          },
        },
      },
    )
    .get('/suggestions', ({ caller, query }): Promise<Body<typeof SuggestionListResponse>> => suggestions.list(caller, query), {
      auth: true,
      role: 'author',
      query: SuggestionListQuery,
      detail: detail(
        'List suggestions',
        'listSuggestions',
        "The organisation's queue, newest first, filtered by `status`, `target_kind`, `language` and `mine=true`, paged with `next_cursor`; `total` counts every match.",
        [{ status: 200, description: 'A page of suggestions.', schema: SuggestionListResponse }],
        ['invalid_request', 'org_not_found'],
      ),
    })
    .post('/suggestions/accept', ({ caller, body }): Promise<Body<typeof BulkAcceptResponse>> => suggestions.acceptMany(caller, body.ids), {
      auth: true,
      role: 'reviewer',
      body: BulkAcceptBody,
      detail: detail(
        'Accept several suggestions',
        'acceptSuggestions',
        'Reviewers. Accepts each named pending suggestion as proposed ("accept all shown"); each is its own decision, so one decided meanwhile is listed in `already_decided` and the rest still go.',
        [{ status: 200, description: 'What became of each.', schema: BulkAcceptResponse }],
        ['invalid_request', 'forbidden_for_role', 'org_not_found', 'database_busy'],
        true,
      ),
    })
    .get('/suggestions/:id', ({ caller, params }): Promise<Body<typeof Suggestion>> => suggestions.get(caller, params.id), {
      auth: true,
      role: 'author',
      params: SuggestionParams,
      detail: detail(
        'Show a suggestion',
        'getSuggestion',
        'One suggestion of the organisation, with its decision when it has one.',
        [{ status: 200, description: 'The suggestion.', schema: Suggestion }],
        ['invalid_request', 'suggestion_not_found', 'org_not_found'],
      ),
    })
    .get(
      '/suggestions/:id/thumbnail',
      async ({ caller, params }) =>
        new Response(await suggestions.thumbnail(caller, params.id), { headers: { 'content-type': 'image/webp', 'cache-control': 'private, max-age=3600' } }),
      {
        auth: true,
        role: 'author',
        params: SuggestionParams,
        detail: detail(
          'The image of a suggestion',
          'getSuggestionThumbnail',
          'A small WebP of the image (at most 192 px a side), for the review page.',
          [{ status: 200, description: 'image/webp' }],
          ['invalid_request', 'suggestion_not_found', 'org_not_found'],
        ),
      },
    )
    .post('/suggestions/:id/accept', ({ caller, params, body }): Promise<Body<typeof Suggestion>> => suggestions.accept(caller, params.id, body?.alt_text), {
      auth: true,
      role: 'reviewer',
      params: SuggestionParams,
      body: AcceptBody.optional(),
      detail: detail(
        'Accept a suggestion',
        'acceptSuggestion',
        'Reviewers. Accepts the proposed alt text (status `accepted`), or `alt_text` instead (status `edited`, when it differs). A suggestion decided already, also by someone else a moment ago, is 409 `already_decided` and keeps that decision.',
        [{ status: 200, description: 'Decided.', schema: Suggestion }],
        DECIDE_ERRORS,
        true,
      ),
    })
    .post('/suggestions/:id/reject', ({ caller, params, body }): Promise<Body<typeof Suggestion>> => suggestions.reject(caller, params.id, body?.reason), {
      auth: true,
      role: 'reviewer',
      params: SuggestionParams,
      body: RejectBody.optional(),
      detail: detail(
        'Reject a suggestion',
        'rejectSuggestion',
        'Reviewers. The place keeps its alt text; `reason` says why, for the author.',
        [{ status: 200, description: 'Decided.', schema: Suggestion }],
        DECIDE_ERRORS,
        true,
      ),
    })
    .post('/suggestions/:id/reopen', ({ caller, params }): Promise<Body<typeof Suggestion>> => suggestions.reopen(caller, params.id), {
      auth: true,
      role: 'reviewer',
      params: SuggestionParams,
      detail: detail(
        'Reopen a suggestion (undo)',
        'reopenSuggestion',
        'Reviewers. Makes a decided suggestion pending again; the log keeps both the decision and the undo.',
        [{ status: 200, description: 'Pending again.', schema: Suggestion }],
        ['invalid_request', 'forbidden_for_role', 'suggestion_not_found', 'not_decided', 'org_not_found', 'database_busy'],
      ),
    })
}
