// The body of POST /api/alt-text, read by the route itself once the caller is authenticated and has a
// credit: JSON (whose image_base64 is decoded straight into the image's buffer as it arrives) or
// multipart/form-data (whose file field `image` is copied straight in). Either way the image is held
// once, the body stops being read the moment it passes a limit (413), and the fields are checked with
// the same schema.
import { bodyChunks, JSON_TYPE, unsupportedType } from '../../http/body'
import { readJsonWithImage } from '../../http/json-image'
import { multipartBoundary, type PartSink, readMultipart } from '../../http/multipart'
import { UploadBuffer } from '../../intake'
import type { ReceivedImage } from '../../intake'
import { ApiError, validationMessage } from '../../shared/errors'
import { MAX_JSON_BODY_BYTES, MAX_UPLOAD_BODY_BYTES, UPLOAD_RECEIVE_SECONDS } from '../../shared/limits'
import type { z } from 'zod'
import { AltTextRequestBody } from './model'
import type { AltTextInput } from './service'

/** A body schema with the image sources (AltTextBody, or a route's that extends it). */
type ImageSchema = z.ZodType<{ image_url?: string | null; image_base64?: string | null }>

/** A request read by readImageRequest: its fields but image_base64, and the bytes that came with it. */
export type ImageRequest<T> = Omit<T, 'image_base64'> & { upload?: ReceivedImage; uploadPlace?: () => void }

const MULTIPART_TYPE = /^multipart\/form-data\s*(?:;|$)/i
const IMAGE_FIELD = 'image'
const BASE64_FIELD = 'image_base64'
/** Headers of one multipart part, and parts in one body: far above any real form, far below harm. */
const MAX_PART_HEADER_BYTES = 8 * 1024
const MAX_PARTS = 64

const SOURCES = 'image_url, image_base64, or a multipart file in the field image'

const timedOut = () => new ApiError('invalid_image', `the request body with the image did not arrive within ${UPLOAD_RECEIVE_SECONDS} seconds`)

/** The declared body length, when the request has one. */
function declaredLength(request: Request): number | null {
  const header = request.headers.get('content-length')
  const length = header === null ? Number.NaN : Number(header)
  return Number.isInteger(length) && length >= 0 ? length : null
}

/**
 * Asks the collector for a (non-blocking) collection once every `everyBytes` of uploads: what a body's
 * chunks left behind once they were copied or decoded is garbage, and on its own schedule the
 * collector may let hundreds of megabytes of it pile up under a burst of large uploads.
 */
export function uploadCollector(everyBytes = 32 * 1024 * 1024) {
  let since = 0
  return {
    received(bytes: number): void {
      since += bytes
      if (since < everyBytes) return
      since = 0
      Bun.gc(false)
    },
  }
}

/** Takes one of the account's upload places (see ImageIntake.uploadPlace); its release is idempotent. */
export type UploadPlace = (signal: AbortSignal) => Promise<() => void>

/** Whether the body may hold an image: multipart, or JSON longer than a body without one may be. */
const mayCarryImage = (type: string, length: number | null) =>
  MULTIPART_TYPE.test(type) || (JSON_TYPE.test(type) && (length === null || length > MAX_JSON_BODY_BYTES))

export type ReadOptions = {
  /** Hears how long waiting for a place and reading the body took (ms). */
  received?: (ms: number) => void
  /** Hears how many image bytes arrived. */
  collector?: ReturnType<typeof uploadCollector>
  /** Taken before a body that may carry an image is read; handed on with the upload, released here otherwise. */
  place?: UploadPlace
}

/**
 * Reads, checks and returns the request. A body that may carry an image is read only once one of the
 * account's upload places is free, so a burst of one account's uploads waits in the sockets, not in memory.
 */
export function readAltTextRequest(request: Request, options: ReadOptions = {}): Promise<AltTextInput> {
  return readImageRequest(request, AltTextRequestBody, options)
}

/** As readAltTextRequest, with the fields checked by `schema` (POST /api/alt-text/review's adds alt_text). */
export async function readImageRequest<S extends ImageSchema>(request: Request, schema: S, options: ReadOptions = {}): Promise<ImageRequest<z.output<S>>> {
  const started = performance.now()
  const type = request.headers.get('content-type') ?? ''
  const length = declaredLength(request)
  const signal = AbortSignal.any([request.signal, AbortSignal.timeout(UPLOAD_RECEIVE_SECONDS * 1000)])
  let release = () => {}
  try {
    if (options.place && mayCarryImage(type, length)) release = await options.place(signal)
    const input = await readBody(request, schema, type, length, signal, options.collector)
    if (!input.upload) release()
    return input.upload ? { ...input, uploadPlace: release } : input
  } catch (error) {
    release()
    throw error
  } finally {
    options.received?.(performance.now() - started)
  }
}

async function readBody<S extends ImageSchema>(
  request: Request,
  schema: S,
  type: string,
  length: number | null,
  signal: AbortSignal,
  collector: ReturnType<typeof uploadCollector> | undefined,
): Promise<ImageRequest<z.output<S>>> {
  let fields: Record<string, unknown>
  let image: UploadBuffer | null = null
  if (JSON_TYPE.test(type)) {
    const chunks = bodyChunks(request, MAX_UPLOAD_BODY_BYTES, signal, timedOut)
    // Base64 decodes to 3/4 of its length: a declared length bounds the image's buffer.
    const expected = length === null ? null : Math.ceil((length * 3) / 4)
    const read = await readJsonWithImage(chunks, {
      field: BASE64_FIELD,
      maxRestBytes: MAX_JSON_BODY_BYTES,
      sink: () => (image = new UploadBuffer(expected)),
    })
    fields = read.body
  } else if (MULTIPART_TYPE.test(type)) {
    const boundary = multipartBoundary(type)
    const form = await readForm(bodyChunks(request, MAX_UPLOAD_BODY_BYTES, signal, timedOut), boundary, length)
    image = form.image
    fields = form.fields
  } else if (length === 0 || request.body === null) {
    fields = {}
  } else {
    throw unsupportedType(type, 'JSON sent with Content-Type: application/json, or multipart/form-data')
  }

  const parsed = schema.safeParse(fields)
  if (!parsed.success) throw new ApiError('invalid_request', validationMessage(parsed.error.issues))
  const upload = (image as UploadBuffer | null)?.finish()
  if (upload) collector?.received(upload.bytes.length)
  const given = [parsed.data.image_url != null && 'image_url', upload !== undefined && (MULTIPART_TYPE.test(type) ? 'the file field image' : 'image_base64')]
  const sources = given.filter((name): name is string => typeof name === 'string')
  if (sources.length === 0) throw new ApiError('invalid_request', `send exactly one image source: ${SOURCES}`)
  if (sources.length > 1) throw new ApiError('invalid_request', `send exactly one image source, not ${sources.join(' and ')}`)
  const { image_base64: _taken, ...options } = parsed.data
  return upload === undefined ? options : { ...options, upload }
}

/** A multipart body: the file in `image` into its buffer, the other fields as the JSON body has them. */
async function readForm(
  chunks: AsyncIterable<Uint8Array>,
  boundary: string,
  length: number | null,
): Promise<{ image: UploadBuffer | null; fields: Record<string, unknown> }> {
  let image: UploadBuffer | null = null
  const values = new Map<string, string[]>()
  let textBytes = 0
  const decoder = new TextDecoder('utf-8', { fatal: true })
  await readMultipart(chunks, boundary, { maxHeaderBytes: MAX_PART_HEADER_BYTES, maxParts: MAX_PARTS }, (part): PartSink => {
    if (part.name === IMAGE_FIELD) {
      if (image !== null) throw new ApiError('invalid_request', 'the field image is given more than once; send one image per request')
      const buffer = new UploadBuffer(length)
      image = buffer
      return { data: (chunk) => buffer.write(chunk), end: () => {} }
    }
    if (part.name === BASE64_FIELD) {
      throw new ApiError('invalid_request', `in a multipart body the image goes in the file field image; ${BASE64_FIELD} is for JSON bodies`)
    }
    if (part.filename !== null) {
      throw new ApiError('invalid_request', `unexpected file in the field ${JSON.stringify(part.name.slice(0, 50))}; the image goes in the field image`)
    }
    const pieces: Uint8Array[] = []
    return {
      data(chunk) {
        textBytes += chunk.length
        if (textBytes > MAX_JSON_BODY_BYTES) {
          throw new ApiError('payload_too_large', `the form fields apart from the image are over the limit of ${MAX_JSON_BODY_BYTES / 1024} KiB`)
        }
        pieces.push(chunk.slice())
      },
      end() {
        let text: string
        try {
          text = decoder.decode(Buffer.concat(pieces))
        } catch {
          throw new ApiError('invalid_request', `the field ${JSON.stringify(part.name.slice(0, 50))} is not valid UTF-8`)
        }
        values.set(part.name, [...(values.get(part.name) ?? []), text])
      },
    }
  })
  return { image, fields: formFields(values) }
}

/** Fields that are lists in the JSON body: in a form, repeated or comma-separated (also as `name[]`). */
const LIST_FIELDS = new Set(['keywords', 'languages'])

/**
 * Form fields as the JSON body has them: `keywords` and `languages` repeated or comma-separated (also as `keywords[]`),
 * `max_length` a number, `detect_decorative` and `long_description` "true" or "false". An empty field counts as not given, as
 * an HTML form sends every input whether filled or not. Any other field given twice is refused.
 */
export function formFields(values: Map<string, string[]>): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  for (const [rawName, all] of values) {
    const name = LIST_FIELDS.has(rawName.replace(/\[\]$/u, '')) ? rawName.replace(/\[\]$/u, '') : rawName
    const given = all.filter((value) => value.trim() !== '')
    if (given.length === 0) continue
    if (LIST_FIELDS.has(name)) {
      const previous = (fields[name] as string[] | undefined) ?? []
      fields[name] = [...previous, ...given.flatMap((value) => value.split(',')).filter((entry) => entry.trim() !== '')]
      continue
    }
    if (given.length > 1) throw new ApiError('invalid_request', `the field ${JSON.stringify(name.slice(0, 50))} is given more than once`)
    const value = given[0]!
    if (name === 'max_length' && /^\s*-?\d+(?:\.\d+)?\s*$/.test(value)) fields[name] = Number(value)
    else if ((name === 'detect_decorative' || name === 'long_description') && /^\s*(?:true|false)\s*$/i.test(value))
      fields[name] = value.trim().toLowerCase() === 'true'
    else fields[name] = value
  }
  return fields
}
