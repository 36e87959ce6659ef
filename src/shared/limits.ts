// Limits the contract states, defined once and read wherever they are enforced, documented or reported
// (error messages, the error reference, the OpenAPI document, --help).

/** The whole alt-text request's deadline: image fetch, preparation, queue and model together. */
export const GENERATION_DEADLINE_MS = 15_000
export const GENERATION_DEADLINE_SECONDS = GENERATION_DEADLINE_MS / 1000

/** Largest image accepted, counted in received (or decoded) bytes. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024
export const MAX_IMAGE_MB = MAX_IMAGE_BYTES / (1024 * 1024)

/** Every JSON body is far smaller: the largest is an alt-text request with its context and keywords. */
export const MAX_JSON_BODY_BYTES = 64 * 1024
export const MAX_JSON_BODY_KIB = MAX_JSON_BODY_BYTES / 1024

/** Requests per window per address and endpoint. Guessing a password or flooding mail must be slow. */
export const RATE_LIMITS = { credentials: 5, standard: 60 } as const
export const RATE_WINDOW_SECONDS = 60

export const MAX_ACTIVE_KEYS = 25
export const MAX_KEY_LABEL_CHARS = 100
export const MAX_KEY_EXPIRY_DAYS = 3650

export const RESET_TOKEN_TTL_MINUTES = 60
