// The streaming JSON image reader as a pure function: what it takes beyond JSON.parse and what it
// refuses on purpose, then the differential fuzz against JSON.parse and a base64 decode of the same
// body, whole and mutated, fed to it in random chunks.
import { describe, expect, test } from 'bun:test'
import type { ByteSink } from '../../src/http/base64-stream.ts'
import { readJsonWithImage } from '../../src/http/json-image.ts'
import { ApiError } from '../../src/shared/errors.ts'
import { fuzzCases, mutate, type Random, randomChunks, streamOf } from '../support/fuzz.ts'

const FIELD = 'image_base64'
const MAX_REST = 64 * 1024
const encoder = new TextEncoder()

type Reading = { fields: Record<string, unknown>; image: Uint8Array | null }

/** Our reading of `body`, or the refusal (an ApiError: anything else is a crash). */
async function ours(body: Uint8Array, pieces: Uint8Array[] = [body], step = 0, maxRest = MAX_REST): Promise<Reading | ApiError> {
  const bytes: number[] = []
  let room = new Uint8Array(0)
  let started = false
  const sink: ByteSink = {
    target: () => {
      room = new Uint8Array(step || 4096)
      return room
    },
    commit: (written) => bytes.push(...room.subarray(0, written)),
    overflow: () => {
      throw new Error('the test sink has no limit')
    },
  }
  try {
    const read = await readJsonWithImage(streamOf(pieces), {
      field: FIELD,
      maxRestBytes: maxRest,
      sink: () => {
        started = true
        return sink
      },
    })
    expect(read.image).toBe(started)
    return { fields: read.body, image: read.image ? Uint8Array.from(bytes) : null }
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    return error
  }
}

const DATA_URL = /^data:image\/[A-Za-z0-9.+-]+(?:;[^;,]*)*;base64,$/i
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}={0,2}|[A-Za-z0-9+/]{3}=?)?$/

/** The reference: JSON.parse, then the field's string (past a data:image/…;base64, head) decoded by Buffer; null when either refuses. */
function reference(text: string): Reading | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return null
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null
  const { [FIELD]: value, ...rest } = parsed as Record<string, unknown>
  if (typeof value !== 'string') return { fields: parsed as Record<string, unknown>, image: null }
  let data = value
  if (value.slice(0, 5).toLowerCase() === 'data:') {
    const comma = value.indexOf(',')
    // The reader looks for the comma within the first 257 characters, and takes printable ASCII only before it.
    const head = value.slice(0, comma + 1)
    if (comma === -1 || comma > 256 || !DATA_URL.test(head) || !/^[\x20-\x7e]*$/.test(head)) return null
    data = value.slice(comma + 1)
  }
  const compact = data.replace(/[ \t\r\n]/g, '')
  return BASE64.test(compact) ? { fields: rest, image: new Uint8Array(Buffer.from(compact, 'base64')) } : null
}

const utf8 = (bytes: Uint8Array): string | null => {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return null
  }
}

describe('where the reader differs from JSON.parse on purpose', () => {
  test('raw line breaks and tabs inside the image string are taken, as `"$(base64 file)"` in a shell writes them', async () => {
    const body = encoder.encode(`{"${FIELD}":"AAAA\nAAAA\r\n\tAA==","language":"en"}`)
    expect(() => JSON.parse(new TextDecoder().decode(body))).toThrow()
    expect(await ours(body)).toEqual({ fields: { language: 'en' }, image: new Uint8Array(7) })
  })

  test('an empty body is no fields (the route then asks for an image source)', async () => {
    expect(await ours(new Uint8Array(0))).toEqual({ fields: {}, image: null })
  })

  test('the image field twice is refused (JSON.parse would keep the last)', async () => {
    const refusal = await ours(encoder.encode(`{"${FIELD}":"AAAA","${FIELD}":"AAAA"}`))
    expect(refusal).toBeInstanceOf(ApiError)
    expect((refusal as ApiError).message).toMatch(/more than once/)
  })

  test('the rest of the body is capped (413) however long the image is', async () => {
    const body = encoder.encode(`{"${FIELD}":"${'A'.repeat(4000)}","context":"${'x'.repeat(100)}"}`)
    expect(await ours(body, [body], 0, 200)).toMatchObject({ fields: { context: 'x'.repeat(100) } })
    expect(await ours(body, [body], 0, 100)).toMatchObject({ code: 'payload_too_large' })
  })

  test('a form feed in the image string is refused, though it is JSON and Buffer skips it', async () => {
    const body = encoder.encode(`{"${FIELD}":"AA\\fAA"}`)
    expect(Buffer.from('AA\fAA', 'base64').length).toBe(3)
    expect(await ours(body)).toMatchObject({ code: 'invalid_image' })
  })
})

describe('defects the fuzzing found', () => {
  test('a data: URL head with a byte that is no UTF-8 (or any non-ASCII) is refused, not read as Latin-1', async () => {
    const body = Buffer.concat([encoder.encode(`{"${FIELD}":"data:image/png;charset=`), new Uint8Array([0xff]), encoder.encode(';base64,AAAA"}')])
    expect(await ours(body)).toMatchObject({ code: 'invalid_image', message: expect.stringMatching(/not data:image\/<type>;base64/) })
    expect(await ours(encoder.encode(`{"${FIELD}":"data:image/png;x=\u00e9;base64,AAAA"}`))).toMatchObject({ code: 'invalid_image' })
    expect(await ours(encoder.encode(`{"${FIELD}":"data:image/png;x=y;base64,AAAA"}`))).toEqual({ fields: {}, image: new Uint8Array(3) })
  })
})

describe('fuzz: against JSON.parse and Buffer on the same body', () => {
  const KEYS = ['language', 'context', 'keywords', 'max_length', 'nested', 'x', 'é', 'image_url', 'image_base64x', 'image']
  const VALUES = (r: Random): unknown =>
    r.pick([
      () => 'en',
      () => 'a "quoted" \\ line\nbreak é 名 😀',
      () => r.int(1000),
      () => -1.5e3,
      () => true,
      () => null,
      () => ['a', 'b'],
      () => ({ [FIELD]: 'not the top-level one', deep: [{ x: 1 }] }),
    ])()

  /** The image string as encoders write it: maybe a data: URL, unpadded, wrapped, with escapes. Returns its JSON text. */
  function imageString(r: Random): { json: string; rawBreaks: boolean } {
    let text = Buffer.from(r.bytes(r.int(300))).toString('base64')
    if (r.chance(0.3)) text = text.replace(/=+$/, '')
    let rawBreaks = false
    const wrap = r.int(4)
    if (wrap === 1) text = text.replace(/(.{76})/g, '$1\\r\\n') // escaped, as JSON encoders do
    if (wrap === 2) {
      text = text.replace(/(.{76})/g, '$1\n') // raw, as `"$(base64 file)"` does
      rawBreaks = true
    }
    if (r.chance(0.3)) text = text.replaceAll('/', '\\/')
    if (r.chance(0.2)) text = text.replace(/[A-Za-z]/, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    if (r.chance(0.3)) text = `${r.pick(['data:image/png;base64,', 'DATA:image/svg+xml;charset=utf-8;base64,', 'data:image\\/jpeg;base64,'])}${text}`
    return { json: `"${text}"`, rawBreaks }
  }

  function validBody(r: Random): { body: Uint8Array; rawBreaks: boolean } {
    const members: string[] = []
    for (const key of KEYS) if (r.chance(0.3)) members.push(`${JSON.stringify(key)}:${JSON.stringify(VALUES(r))}`)
    let rawBreaks = false
    if (r.chance(0.9)) {
      // Not a string: left among the fields, for the schema to refuse.
      const image = r.chance(0.9) ? imageString(r) : { json: JSON.stringify(r.pick([1, null, true, ['AAAA'], { a: 'AAAA' }])), rawBreaks: false }
      rawBreaks = image.rawBreaks
      const key = r.chance(0.1) ? '"image\\u005fbase64"' : `"${FIELD}"`
      members.splice(r.int(members.length + 1), 0, `${key}${r.pick(['', ' '])}:${r.pick(['', ' ', '\n\t'])}${image.json}`)
    }
    const space = () => r.pick(['', '', ' ', '\r\n  '])
    const text = `${r.chance(0.05) ? '\ufeff' : ''}${space()}{${space()}${members.join(`${space()},${space()}`)}${space()}}${space()}`
    return { body: encoder.encode(text), rawBreaks }
  }

  /** Compares our reading with the reference's; returns which way they agreed. */
  async function compare(r: Random, body: Uint8Array): Promise<'same' | 'both refuse' | 'stricter' | 'raw breaks' | 'empty'> {
    const mine = await ours(body, randomChunks(r, body, 8), r.chance(0.3) ? r.range(1, 7) : 0)
    const text = utf8(body)
    const expected = text === null ? null : reference(text)
    const shown = () => JSON.stringify(Buffer.from(body).toString('latin1').slice(0, 400))
    if (mine instanceof ApiError) {
      expect(['invalid_request', 'invalid_image']).toContain(mine.code)
      if (expected === null) return 'both refuse'
      // The one refusal JSON.parse cannot make: the field named twice (it keeps the last).
      if (/more than once/.test(mine.message) && text!.split(FIELD).length > 2) return 'stricter'
      throw new Error(`ours refused (${mine.message}) what the reference reads: ${shown()}`)
    }
    if (text === '') return 'empty' // no fields, as above (a byte order mark alone is empty too)
    if (expected === null) {
      // The one thing ours takes that JSON.parse does not: raw CR, LF and tab in the image string.
      const lenient = text === null ? null : reference(text.replace(/[\r\n\t]/g, ''))
      if (lenient === null || text!.trim() === '') throw new Error(`ours read what the reference refuses: ${shown()}`)
      expect(mine).toEqual(lenient)
      return 'raw breaks'
    }
    expect(mine).toEqual(expected)
    return 'same'
  }

  test('3 × 300 bodies as encoders write them, fed in random chunks: the same fields and image bytes', async () => {
    await fuzzCases(300, async (r) => {
      const { body, rawBreaks } = validBody(r)
      const outcome = await compare(r, body)
      // Raw line breaks (a text of over 76 characters) make the body no JSON, but ours reads it the same.
      expect(outcome).toBe(rawBreaks && outcome === 'raw breaks' ? 'raw breaks' : 'same')
    })
  })

  test('3 × 500 mutated bodies: the same, both refuse, or one of the differences named above', async () => {
    await fuzzCases(500, async (r) => {
      await compare(r, mutate(r, validBody(r).body))
    })
  })
})
