// The contract's decisions, stated once in the OpenAPI document (the docs/ pages say the same for people).
import {
  GENERATION_DEADLINE_SECONDS,
  MAX_ACTIVE_KEYS,
  MAX_IMAGE_MB,
  MAX_JSON_BODY_KIB,
  MAX_KEY_EXPIRY_DAYS,
  MAX_KEY_LABEL_CHARS,
  MAX_LONG_DESCRIPTION_CHARS,
  RATE_LIMITS,
  RATE_WINDOW_SECONDS,
  RESET_TOKEN_TTL_MINUTES,
  SESSION_IDLE_HOURS,
  SESSION_MAX_DAYS,
} from '../../shared/limits'
import { MAX_CONTEXT_CHARS, MAX_KEYWORD_CHARS, MAX_KEYWORDS } from '../alt-text/model'
export const API_DESCRIPTION = `Self-hosted alt-text service: WCAG 2.1 alt text for images, written by a local vision model.

## Conventions
- Bodies are JSON. Every error has the shape \`{"error": {"code", "message", "docs"}}\`, except the 401 of
  \`POST /api/validate-key\`, whose \`error\` is a plain string. \`docs\` links to \`/docs/errors#<code>\`.
- Malformed JSON, a body that is not an object, a missing required field, a wrong type or an out-of-range
  value: **400 \`invalid_request\`**, with a message that names the field (never 422).
- Unknown route: 404 \`not_found\`. Body over ${MAX_JSON_BODY_KIB} KiB: 413 \`payload_too_large\`. A 500 (\`internal_error\`) never
  carries a stack trace; quote its \`X-Request-Id\` to the operator.
- \`expires\` is Unix time in **seconds**; every other timestamp is an ISO 8601 UTC string.
- Emails are trimmed and compared case-insensitively. Passwords have 8 to 128 characters.

## Authentication
- \`X-API-Key: alt_<64 lowercase hex>\`. Missing: 401 \`missing_api_key\`; malformed, unknown or revoked: 401
  \`invalid_api_key\`; past its expiry: 401 \`key_expired\`.
- Only a SHA-256 hash of each key is stored: a key is shown once (at registration, creation, rotation or
  password reset) and cannot be shown again. Its prefix (\`alt_\` + 8 hex) identifies it.
- At most ${MAX_ACTIVE_KEYS} active keys per account (409 \`key_limit_reached\`). \`expires_in_days\`: 1 to ${MAX_KEY_EXPIRY_DAYS}. \`label\`: at
  most ${MAX_KEY_LABEL_CHARS} characters. Revoke/rotate of an unknown, revoked, expired or foreign prefix: 404 \`key_not_found\`.
- A rotated key keeps the label and the expiry time of the old key.
- Every authenticated request updates the key's \`last_used_at\` (written within about a second).
- \`GET /api/keys\` and the login answer list active keys only (not revoked, not expired), newest first.
- Reset tokens: 32 random bytes, stored hashed, valid ${RESET_TOKEN_TTL_MINUTES} minutes, single use; a newer request invalidates
  older tokens. A reset revokes every key, ends every browser session and issues one new key.
- **Or a browser session** (\`cookieAuth\`): \`POST /api/session\` sets the \`alttext_session\` cookie (\`__Host-alttext_session\` over https); routes that take a
  key take it too (a key, when sent, wins). A cookie that is not a live session: 401 \`invalid_session\`. It ends
  ${SESSION_IDLE_HOURS} hours after its last request or ${SESSION_MAX_DAYS} days after sign-in. A \`POST\` or \`DELETE\` made with it must carry the
  service's own \`Origin\` (or \`Sec-Fetch-Site: same-origin\`): otherwise 403 \`cross_site_request\`. A request from another
  origin never uses it, and CORS (\`ALTTEXT_CORS_ORIGINS\`) never allows credentials.

## Credits
- Plan \`free\`: 50 credits (operator-configurable) per billing period, the calendar month in UTC.
- A fresh successful generation costs 1 credit; a cached result and every failure cost nothing. With no credit
  left every generation is refused with 429 before the image is fetched, also one whose answer is cached.
- Out of credits: 429 \`quota_exceeded\` with the period's end and \`Retry-After\`.
- \`api_calls_today\` counts requests that authenticated with any key of the account since 00:00 UTC.

## Rate limits
- Sliding window of ${RATE_WINDOW_SECONDS} seconds per client address and endpoint: ${RATE_LIMITS.credentials} for register, login and
  forgot-password; ${RATE_LIMITS.standard} for every other endpoint (\`/health\` is never limited). Over the limit: 429 \`rate_limited\` with \`Retry-After\`.
- Every limited response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`.
- The client address is the connection's peer; \`X-Forwarded-For\` counts only when that peer is a trusted proxy
  (\`ALTTEXT_TRUST_PROXY\` hops, \`ALTTEXT_TRUSTED_PROXIES\`). IPv6 clients are counted per /64.

## Accounts
- Register: 201 with the first key; a taken email (case-insensitive): 409 \`email_taken\`.
- Login: 401 \`invalid_credentials\`, the same for an unknown email and a wrong password, in about the same time.
- Forgot-password: 202 whether or not the email exists. Reset: 200 with a new key; 400 \`invalid_token\` for an
  unknown, used or expired token.

## Alt text
- Exactly one image source: \`image_url\`, \`image_base64\` (base64 or a \`data:image/…;base64,\` URL), or a
  multipart/form-data body with the file in \`image\` (options as form fields); none or several: 400 \`invalid_request\`.
  Uploaded bytes that are no usable image: 400 \`invalid_image\`; over ${MAX_IMAGE_MB} MB decoded: 413 \`payload_too_large\`.
  The same bytes are the same cache entry, fetched or uploaded.
- \`detect_decorative: true\` lets the model judge the image purely decorative: \`alt_text: ""\`, \`decorative: true\`,
  a \`decorative_reason\`; it costs a credit like any answer.
- \`long_description: true\`: a complex image (chart, graph, diagram, map, infographic, table) also gets
  \`long_description\`, plain text of at most ${MAX_LONG_DESCRIPTION_CHARS} characters, and an alt text that names the kind of
  image and its point; any other image gets \`null\`. The field is there only when asked; same one credit; part of the cache key.
- The response carries both field sets of the specification, plus \`wcag_issues\`, \`model\`, \`image\`, \`decorative\`,
  \`decorative_reason\`, \`text_in_image\` (the text the image shows, or null) and \`source\` (\`url\` or \`upload\`).
- \`language\`: a BCP 47 tag (\`de\`, \`pt-BR\`, \`zh-Hant\`), answered in canonical case; \`languages\`: 1 to 5 tags instead (the first from the image, the others translated from it; \`alt_texts\` by tag, \`failed_languages\`; a credit per language); \`max_length\`: 20 to 1000 (default 125); \`context\`: at most ${MAX_CONTEXT_CHARS} characters;
  \`keywords\`: at most ${MAX_KEYWORDS} strings of at most ${MAX_KEYWORD_CHARS} characters (case, order and repeats do not matter); \`style\`: \`descriptive\` or \`concise\`.
- 400 \`invalid_image_url\` when the URL is not https, cannot be resolved, points at a blocked address, answers
  other than 2xx, is over ${MAX_IMAGE_MB} MB, is not JPEG, PNG, GIF, WebP, AVIF or SVG by its bytes, is truncated, or has more pixels
  than allowed. Model failures: 502 \`upstream_error\`; no answer in ${GENERATION_DEADLINE_SECONDS} s: 504 \`upstream_timeout\`; queue full:
  503 \`overloaded\` with \`Retry-After\`.
`
