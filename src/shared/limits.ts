// Limits the contract states, defined once and read wherever they are enforced, documented or reported
// (error messages, the error reference, the OpenAPI document, --help).

/** The whole alt-text request's deadline: image fetch, preparation, queue and model together. */
export const GENERATION_DEADLINE_MS = 15_000
export const GENERATION_DEADLINE_SECONDS = GENERATION_DEADLINE_MS / 1000

/**
 * A credit held for a generation under way lasts this long unless its process renews it (every third of
 * it, while it is held): longer than the longest generation, so a live hold never lapses, and short, so
 * the holds of a process that was killed give their credits back soon.
 */
export const CREDIT_HOLD_SECONDS = GENERATION_DEADLINE_SECONDS + 45
export const CREDIT_HOLD_MS = CREDIT_HOLD_SECONDS * 1000

/**
 * The model work one review's credit buys: at most this many model calls, retries included (a plain
 * call after a schema refusal, another host after a host failure), and this much model time for them
 * together; past it the review is 504, free.
 */
export const MAX_REVIEW_MODEL_CALLS = 2
export const MAX_REVIEW_MODEL_MS = 10_000
export const MAX_REVIEW_MODEL_SECONDS = MAX_REVIEW_MODEL_MS / 1000

/** Largest image accepted, counted in received (or decoded) bytes. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024
export const MAX_IMAGE_MB = MAX_IMAGE_BYTES / (1024 * 1024)

/** Every JSON body is far smaller: the largest is an alt-text request with its context and keywords. */
export const MAX_JSON_BODY_BYTES = 64 * 1024
export const MAX_JSON_BODY_KIB = MAX_JSON_BODY_BYTES / 1024

/**
 * The shape of every JSON body, checked on its bytes before it is parsed (400 invalid_request beyond):
 * arrays and objects nest at most MAX_JSON_DEPTH levels (the body's own object is the first), and hold
 * at most MAX_JSON_VALUES elements and members together (MAX_BATCH_JSON_VALUES in a batch body). No
 * valid request comes near them; without them a body of brackets costs gigabytes once parsed.
 */
export const MAX_JSON_DEPTH = 64
export const MAX_JSON_VALUES = 10_000

/**
 * The body limit of POST /api/alt-text, the one route that takes an image in its body: a MAX_IMAGE_BYTES
 * image as base64 (4/3 of its size, with room for escaped line breaks every 76 characters) or as
 * multipart, beside the other fields. The image alone must still be at most MAX_IMAGE_BYTES once decoded,
 * and the other fields at most MAX_JSON_BODY_BYTES. Every other route keeps MAX_JSON_BODY_BYTES.
 */
export const MAX_UPLOAD_BODY_BYTES = 15 * 1024 * 1024
export const MAX_UPLOAD_BODY_MB = MAX_UPLOAD_BODY_BYTES / (1024 * 1024)
/** A long description (`long_description: true`, for a complex image) is cut at a sentence boundary within this. */
export const MAX_LONG_DESCRIPTION_CHARS = 2000
/** An uploaded image must have arrived this long after the request began; a slower client gets 400. */
export const UPLOAD_RECEIVE_SECONDS = 60

/** Requests per window per address and endpoint. Guessing a password or flooding mail must be slow. */
export const RATE_LIMITS = { credentials: 5, standard: 60 } as const
export const RATE_WINDOW_SECONDS = 60
/**
 * /ready is not rate limited (a load balancer polls every replica from one address): its checks start at
 * most this often, one at a time, and every request waits for one that starts after it arrived, so any
 * number of probes costs a replica at most 10 database and Redis writes a second.
 */
export const READINESS_MIN_INTERVAL_MS = 100
/**
 * With ALTTEXT_REDIS_URL: a rate-limit or slow-down check waits this long for Redis at most by default
 * (ALTTEXT_REDIS_TIMEOUT_MS); past it, or while Redis is held to be down, this replica decides alone from
 * its own memory. Far above a healthy Redis's round trip (well under 1 ms on a LAN), so that load alone
 * does not trip it.
 */
export const REDIS_TIMEOUT_MS = 250
/**
 * After Redis failed a check, this replica decides alone for at least this long before one command
 * probes Redis again; each failure soon after (a failed probe, or an outage within REDIS_MAX_RETRY_MS of
 * the last one's end) doubles the wait, up to REDIS_MAX_RETRY_MS. A Redis that answers only now and then
 * is one long outage, not many short ones.
 */
export const REDIS_RETRY_MS = 5000
export const REDIS_MAX_RETRY_MS = 30_000

export const MAX_ACTIVE_KEYS = 25
export const MAX_KEY_LABEL_CHARS = 100
export const MAX_KEY_EXPIRY_DAYS = 3650
/** How long a rotated key may keep working beside its replacement (`expire_old_in_seconds`): a day at most. */
export const MAX_ROTATION_GRACE_SECONDS = 86_400

export const RESET_TOKEN_TTL_MINUTES = 60

/** One mail of a kind (a verification link, a reset link) per account this often at most: the mailbox may be someone else's. */
const MAIL_RESEND_SECONDS = 60
/** A mailed email-verification link works this long; a new one may be asked for once a minute per account. */
export const EMAIL_VERIFICATION_TTL_HOURS = 24
export const VERIFICATION_RESEND_SECONDS = MAIL_RESEND_SECONDS
/**
 * A reset mail goes to an account at most this often, however many addresses ask. A request within it
 * is answered alike and mails nothing; the earlier link still works.
 */
export const RESET_MAIL_RESEND_SECONDS = MAIL_RESEND_SECONDS

/** Browser sessions: ended after this long without a request, and after this long at most. */
export const SESSION_IDLE_HOURS = 12
export const SESSION_MAX_DAYS = 7
/** A session's last use is written at most this often (the idle expiry is that much coarse). */
export const SESSION_TOUCH_EVERY_MS = 60_000

/** Per-account sign-in slow-down: after this many failed password checks within the window, attempts wait. */
export const LOGIN_FAILURES_BEFORE_DELAY = 5
export const LOGIN_FAILURE_WINDOW_MINUTES = 15
/** The wait doubles per further failure, from 1 s up to this. */
export const LOGIN_MAX_DELAY_SECONDS = 30
/** Addresses that signed in to an account before (never delayed), kept per account. */
export const LOGIN_KNOWN_ADDRESSES = 16
/** With Redis, an account's known addresses are forgotten this long after its last successful sign-in. */
export const LOGIN_KNOWN_ADDRESS_DAYS = 30

/** The generation history keeps this many entries per account (older ones are pruned); daily counts go back this far. */
export const HISTORY_MAX_ITEMS = 50
export const USAGE_HISTORY_MAX_DAYS = 365
export const USAGE_HISTORY_DEFAULT_DAYS = 30

/** A webhook delivery waits this long for the receiver's response headers (connecting and TLS included). */
export const WEBHOOK_TIMEOUT_MS = 10_000
export const WEBHOOK_TIMEOUT_SECONDS = WEBHOOK_TIMEOUT_MS / 1000
/**
 * Waits before each retry of a failed webhook delivery, doubling from 30 s: 9 attempts over a little more
 * than two hours, then the delivery is `failed`. The wait is counted from the start of the attempt before.
 */
export const WEBHOOK_RETRY_DELAYS_SECONDS = [30, 60, 120, 240, 480, 960, 1920, 3840] as const
/** Webhook deliveries under way at once, across all accounts; the others wait for a place. */
export const WEBHOOK_MAX_IN_FLIGHT = 8
/** Webhook deliveries of one account under way at once: receivers that hang hold back only their own account. */
export const WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT = 2
/** The delivery log's page size: default and most. */
export const WEBHOOK_DELIVERIES_DEFAULT_PAGE = 20
export const WEBHOOK_DELIVERIES_MAX_PAGE = 100

/** Batches (POST /api/batches): items per batch, and each item's metadata as JSON. */
export const MAX_BATCH_ITEMS = 100
export const MAX_BATCH_METADATA_BYTES = 2048
/**
 * The body limit of POST /api/batches: room for a few large images in base64 (each item's image is at
 * most MAX_IMAGE_BYTES once decoded) or for 100 URLs. The body is read whole (to this limit) and parsed
 * once; larger collections go in several batches or as image_url.
 */
export const MAX_BATCH_BODY_BYTES = 32 * 1024 * 1024
export const MAX_BATCH_BODY_MB = MAX_BATCH_BODY_BYTES / (1024 * 1024)
/** 100 items with every field and 2 KB of metadata each (about 1 000 values at most) fit twice over. */
export const MAX_BATCH_JSON_VALUES = 250_000
/**
 * A batch body longer than MAX_JSON_BODY_BYTES takes this many times its length from the decode budget
 * (ALTTEXT_DECODE_BUDGET_MB, at most all of it) while it is read, parsed and stored: its bytes, their
 * text, the parsed strings and the decoded images are all held at once. When the budget cannot give it
 * at once, the batch is refused with 503 overloaded.
 */
export const BATCH_BODY_MEMORY_FACTOR = 4
/**
 * Uploaded images (image_base64) wait in the database until their item has run. A batch whose images
 * would make the account's waiting images more than this is refused (429 pending_images_limit), and one
 * that would make the whole service's more than MAX_PENDING_BATCH_IMAGE_BYTES (503 overloaded).
 */
export const MAX_PENDING_BATCH_IMAGE_BYTES_PER_ACCOUNT = 64 * 1024 * 1024
export const MAX_PENDING_BATCH_IMAGE_MB = MAX_PENDING_BATCH_IMAGE_BYTES_PER_ACCOUNT / (1024 * 1024)
export const MAX_PENDING_BATCH_IMAGE_BYTES = 1024 * 1024 * 1024
/** How long a client refused for its waiting images is told to wait before it tries again. */
export const PENDING_IMAGES_RETRY_SECONDS = 30
/** An Idempotency-Key names the first batch made with it for this long; at most this many characters. */
export const IDEMPOTENCY_WINDOW_HOURS = 24
export const MAX_IDEMPOTENCY_KEY_CHARS = 255
/** GET /api/batches page size. */
export const BATCH_LIST_DEFAULT = 20
export const BATCH_LIST_MAX = 100
/** Transient failures of a batch item (model server, queue, database busy) are tried this many times in all. */
export const BATCH_ITEM_ATTEMPTS = 3

/**
 * Most bytes read of one model answer (chat, generate, chat completions; streamed or not): a real one
 * is a few KB, as its tokens are bounded. Reading stops where this is passed: 502, nothing charged.
 */
export const MAX_MODEL_ANSWER_BYTES = 4 * 1024 * 1024
/**
 * Most characters of one model answer that are read as an answer (cleaned, parsed, judged): several
 * times the longest a real one can be (its tokens are bounded: an alt text, a long description of
 * MAX_LONG_DESCRIPTION_CHARS and the JSON around them), and short enough that cleaning it never holds
 * the event loop for long. The rest of a longer answer is dropped before anything reads it.
 */
export const MAX_MODEL_ANSWER_CHARS = 16 * 1024
/** Most bytes read of a model server's metadata (/api/tags, /api/show, /api/version, /v1/models), for its health check. */
export const MAX_MODEL_METADATA_BYTES = 2 * 1024 * 1024
