// The streaming base64 decoder as a pure function: against Buffer's and atob's decoding of the same
// text, cut at every place, into sinks of every size, and its refusals of what is not base64.
import { describe, expect, test } from 'bun:test'
import { Base64Error, Base64Stream, type ByteSink } from '../../src/http/base64-stream.ts'
import { fuzzCases, type Random } from '../support/fuzz.ts'

/** A sink that hands out room `step` bytes at a time (all of it, when 0), up to `limit` bytes. */
function collector(step = 0, limit = Number.POSITIVE_INFINITY) {
  const bytes: number[] = []
  let room = new Uint8Array(0)
  const sink: ByteSink = {
    target() {
      const left = Math.min(limit - bytes.length, step || 4096)
      room = new Uint8Array(Math.max(0, left))
      return room
    },
    commit(written) {
      expect(written).toBeLessThanOrEqual(room.length)
      bytes.push(...room.subarray(0, written))
      room = room.subarray(written)
    },
    overflow() {
      throw new Error('over the limit')
    },
  }
  return { sink, bytes: () => Uint8Array.from(bytes) }
}

/** Decodes `pieces` (each a separate chunk, flushed after it) with `step`-byte sink rooms. */
function decode(pieces: string[], step = 0): Uint8Array {
  const out = collector(step)
  const stream = new Base64Stream(out.sink)
  for (const piece of pieces) {
    const chunk = Buffer.from(piece, 'latin1')
    stream.write(chunk, 0, chunk.length)
    stream.flush()
  }
  stream.end()
  return out.bytes()
}

function refusal(pieces: string[]): Base64Error {
  try {
    decode(pieces)
  } catch (error) {
    expect(error).toBeInstanceOf(Base64Error)
    return error as Base64Error
  }
  throw new Error(`accepted ${JSON.stringify(pieces.join(''))}`)
}

const SKIPPED = /[ \t\r\n]/g
/** What the decoder takes, white space left out: quads, then a last one of 2 or 3 characters, padded or not. */
const ACCEPTED = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}={0,2}|[A-Za-z0-9+/]{3}=?)?$/

/** The reference: Buffer's decoding of the text when it is in the accepted form, else null. */
function reference(text: string): Uint8Array | null {
  const compact = text.replace(SKIPPED, '')
  return ACCEPTED.test(compact) ? new Uint8Array(Buffer.from(compact, 'base64')) : null
}

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 37 + 11) & 0xff)
const b64 = (data: Uint8Array) => Buffer.from(data).toString('base64')

describe('the same bytes as Buffer and atob', () => {
  test('every length from 0 to 200 bytes, padded and unpadded, through the native and the character path', () => {
    for (let n = 0; n <= 200; n++) {
      const data = bytes(n)
      const padded = b64(data)
      expect(decode([padded])).toEqual(data)
      expect(decode([padded.replace(/=+$/, '')])).toEqual(data)
      // atob agrees on every well-formed text.
      expect(decode([padded])).toEqual(Uint8Array.from(atob(padded), (c) => c.charCodeAt(0)))
    }
  })

  test('cut into two chunks at every offset, and into three at every pair of offsets of a shorter text', () => {
    const data = bytes(150)
    const text = b64(data).replace(/=+$/, '') // 200 characters: runs over the native decoder's minimum
    for (let cut = 0; cut <= text.length; cut++) expect(decode([text.slice(0, cut), text.slice(cut)])).toEqual(data)
    const short = `${b64(bytes(20))}`
    for (let a = 0; a <= short.length; a++) {
      for (let b = a; b <= short.length; b++) expect(decode([short.slice(0, a), short.slice(a, b), short.slice(b)])).toEqual(bytes(20))
    }
  })

  test('several runs of one chunk (as between JSON escapes), cut at every offset', () => {
    const data = bytes(120)
    const text = Buffer.from(b64(data), 'latin1')
    for (let cut = 0; cut <= text.length; cut++) {
      const out = collector()
      const stream = new Base64Stream(out.sink)
      stream.write(text, 0, cut)
      stream.write(text, cut, text.length)
      stream.end()
      expect(out.bytes()).toEqual(data)
    }
  })

  test('into sinks that give 1 to 7 bytes of room at a time', () => {
    const data = bytes(200)
    for (let step = 1; step <= 7; step++) {
      expect(decode([b64(data)], step)).toEqual(data)
      expect(decode([b64(data).slice(0, 77), b64(data).slice(77)], step)).toEqual(data)
    }
  })

  test('single characters (as JSON escapes give them) between runs', () => {
    const text = b64(bytes(100))
    const out = collector()
    const stream = new Base64Stream(out.sink)
    const chunk = Buffer.from(text, 'latin1')
    stream.write(chunk, 0, 70)
    for (let i = 70; i < 75; i++) stream.char(text.charCodeAt(i))
    stream.char(0x0a)
    stream.write(chunk, 75, chunk.length)
    stream.end()
    expect(out.bytes()).toEqual(bytes(100))
  })

  test("cut short at every length: the reference's bytes where what is left is base64, a refusal where not", () => {
    const text = `${b64(bytes(40))}`
    for (let length = 0; length <= text.length; length++) {
      const cut = text.slice(0, length)
      const expected = reference(cut)
      if (expected === null)
        expect(refusal([cut]).code).toBeNull() // only a single character over can be left
      else expect(decode([cut])).toEqual(expected)
    }
  })

  test('trailing bits of a last quad are ignored, as Buffer and atob ignore them', () => {
    expect(decode(['AB=='])).toEqual(new Uint8Array(Buffer.from('AB==', 'base64')))
    expect(decode(['AB=='])).toEqual(Uint8Array.from(atob('AB=='), (c) => c.charCodeAt(0)))
    expect(decode(['AAB'])).toEqual(new Uint8Array([0, 0]))
  })
})

describe('white space', () => {
  test('space, tab, CR and LF anywhere are skipped, in a long run and between single characters', () => {
    const data = bytes(300)
    const wrapped = b64(data).replace(/(.{76})/g, '$1\r\n')
    expect(decode([wrapped])).toEqual(data)
    expect(decode([b64(data).split('').join(' ')])).toEqual(data)
    expect(decode([`\t ${b64(bytes(4))}\n`])).toEqual(bytes(4))
    expect(decode(['AA= =', ' '])).toEqual(new Uint8Array([0]))
  })

  test('form feed, which atob and the native decoder skip, is refused (in a long run too)', () => {
    expect(atob('QQ\f==')).toBe('A') // the difference, stated
    expect(refusal(['QQ\f=='])).toMatchObject({ code: 0x0c, position: 3 })
    const long = b64(bytes(120))
    expect(refusal([`${long.slice(0, 100)}\f${long.slice(100)}`])).toMatchObject({ code: 0x0c, position: 101 })
  })
})

describe('padding', () => {
  test.each([
    ['AA==', [0]],
    ['AA=', [0]],
    ['AA', [0]],
    ['AAA=', [0, 0]],
    ['AAA', [0, 0]],
    ['', []],
    ['AAAAAA==', [0, 0, 0, 0]],
  ])('%p is taken', (text, expected) => {
    expect(decode([text])).toEqual(Uint8Array.from(expected))
  })

  test('"AA=" (padded short of a quad) is taken, though atob refuses it', () => {
    expect(() => atob('AA=')).toThrow()
    expect(decode(['AA='])).toEqual(new Uint8Array([0]))
  })

  test.each([
    ['=', 1],
    ['A=', 2],
    ['AAAA=', 5],
    ['AA===', 5],
    ['AAA==', 5],
    ['AA==AA', 5],
    ['AA=A', 4],
  ])('%p is refused at character %d', (text, position) => {
    expect(refusal([text])).toMatchObject({ code: text.charCodeAt(position - 1), position })
  })

  test('a single character over at the end is refused, with no character to blame', () => {
    expect(refusal(['A'])).toMatchObject({ code: null })
    expect(refusal(['AAAAA', ' '])).toMatchObject({ code: null, position: 6 })
  })
})

describe('characters outside the alphabet', () => {
  test.each([
    ['base64url "-"', 'AA-A', 3],
    ['base64url "_"', 'AA_A', 3],
    ['a dot', 'A.AA', 2],
    ['a NUL', 'AA\0A', 3],
    ['a byte over 0x7f', 'AAA\xc3', 4],
    ['a quote', 'AA"A', 3],
  ])('%s is refused at its place', (_name, text, position) => {
    expect(refusal([text])).toMatchObject({ code: text.charCodeAt(position - 1), position })
  })

  test('a bad character deep in a long run is found at its exact place (the native path gives way)', () => {
    const text = b64(bytes(300))
    for (const at of [0, 63, 64, 199, 399]) {
      const bad = `${text.slice(0, at)}@${text.slice(at + 1)}`
      expect(refusal([bad])).toMatchObject({ code: 0x40, position: at + 1 })
    }
  })

  test('a character past Latin-1 from an escape is refused', () => {
    const stream = new Base64Stream(collector().sink)
    stream.char(0x41)
    expect(() => stream.char(0x0141)).toThrow(Base64Error)
  })
})

describe('the sink', () => {
  test("bytes past the sink's limit: its overflow() is what is thrown", () => {
    const out = collector(0, 10)
    const stream = new Base64Stream(out.sink)
    const chunk = Buffer.from(b64(bytes(12)))
    expect(() => {
      stream.write(chunk, 0, chunk.length)
      stream.end()
    }).toThrow('over the limit')
  })

  test('exactly the limit fits, by the native path and a character at a time', () => {
    for (const n of [10, 99]) {
      const out = collector(0, n)
      const stream = new Base64Stream(out.sink)
      const chunk = Buffer.from(b64(bytes(n)))
      stream.write(chunk, 0, chunk.length)
      stream.end()
      expect(out.bytes()).toEqual(bytes(n))
    }
  })
})

describe('fuzz: the decoder against the reference on random texts, cut at random places', () => {
  // Texts mostly of the alphabet, with the characters that matter for its rules mixed in.
  const ODD = ['=', '=', ' ', '\n', '\r', '\t', '\f', '-', '_', '.', '\0', '\xff', '"']
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

  function randomText(r: Random): string {
    if (r.chance(0.5)) {
      // Valid base64 of random bytes, maybe unpadded, maybe wrapped, maybe with one odd character put in.
      let text = b64(r.bytes(r.int(200)))
      if (r.chance(0.3)) text = text.replace(/=+$/, '')
      if (r.chance(0.3)) text = text.replace(new RegExp(`(.{${r.range(1, 80)}})`, 'g'), '$1\r\n')
      if (r.chance(0.5)) {
        const at = r.int(text.length + 1)
        text = text.slice(0, at) + r.pick(ODD) + text.slice(at + r.int(2))
      }
      return text
    }
    return Array.from({ length: r.int(120) }, () => (r.chance(0.85) ? ALPHABET[r.int(64)]! : r.pick(ODD))).join('')
  }

  test('3 × 2000 cases: the same bytes, or both refuse', async () => {
    await fuzzCases(2000, (r) => {
      const text = randomText(r)
      const cuts = [r.int(text.length + 1), r.int(text.length + 1)].sort((a, b) => a - b)
      const pieces = [text.slice(0, cuts[0]), text.slice(cuts[0], cuts[1]), text.slice(cuts[1])]
      const expected = reference(text)
      let got: Uint8Array | null
      try {
        got = decode(pieces, r.chance(0.3) ? r.range(1, 5) : 0)
      } catch (error) {
        if (!(error instanceof Base64Error)) throw error
        got = null
      }
      if (got === null && expected !== null) throw new Error(`refused ${JSON.stringify(text)}, which Buffer decodes`)
      if (got !== null && expected === null) throw new Error(`took ${JSON.stringify(text)}, which is not base64`)
      if (got !== null) expect(got).toEqual(expected!)
    })
  })
})
