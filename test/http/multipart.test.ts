// The streaming multipart reader as a pure function: the defects its fuzzing found, then the
// differential fuzz against Bun's own Request.formData() on the same bodies, whole and mutated, fed to
// ours in random chunks. Where the two differ by design, the difference is named below.
import { describe, expect, test } from 'bun:test'
import { type PartInfo, readMultipart } from '../../src/http/multipart.ts'
import { ApiError } from '../../src/shared/errors.ts'
import { fuzzCases, mutate, type Random, randomChunks, streamOf } from '../support/fuzz.ts'

type Part = PartInfo & { data: Uint8Array }
const LIMITS = { maxHeaderBytes: 8192, maxParts: 64 }
const encoder = new TextEncoder()

/** Our reading of `body`: its parts, or the refusal's message. */
async function ours(body: Uint8Array, boundary: string, pieces: Uint8Array[] = [body]): Promise<Part[] | string> {
  const parts: Part[] = []
  try {
    await readMultipart(streamOf(pieces), boundary, LIMITS, (info) => {
      const chunks: Uint8Array[] = []
      const part: Part = { ...info, data: new Uint8Array(0) }
      parts.push(part)
      return {
        data: (chunk) => chunks.push(chunk.slice()),
        end: () => {
          part.data = Buffer.concat(chunks)
        },
      }
    })
  } catch (error) {
    // Every refusal is the reader's own 400, never a crash.
    if (!(error instanceof ApiError) || error.code !== 'invalid_request') throw error
    return error.message
  }
  return parts
}

/** Bun's reading of `body`, or its error's message. */
async function bun(body: Uint8Array, boundary: string): Promise<Array<[string, string | File]> | string> {
  const request = new Request('http://127.0.0.1/', {
    method: 'POST',
    body: body as Uint8Array<ArrayBuffer>,
    headers: { 'content-type': `multipart/form-data; boundary="${boundary}"` },
  })
  try {
    return [...(await request.formData()).entries()] as Array<[string, string | File]>
  } catch (error) {
    return (error as Error).message
  }
}

/** Both readings in one form: name, file name (Bun has none for filename=""), and the bytes (a text field's as Bun decodes them). */
async function comparable(parts: Part[] | Array<[string, string | File]>): Promise<string[]> {
  const out: string[] = []
  for (const part of parts) {
    if (Array.isArray(part)) {
      const [name, value] = part
      out.push(typeof value === 'string' ? `${name}=${value}` : `${name} file ${value.name || '-'} ${Buffer.from(await value.arrayBuffer()).toString('hex')}`)
    } else {
      out.push(
        part.filename === null
          ? `${part.name}=${new TextDecoder().decode(part.data)}`
          : `${part.name} file ${part.filename || '-'} ${Buffer.from(part.data).toString('hex')}`,
      )
    }
  }
  return out
}

const form = (boundary: string, parts: string[]) => encoder.encode(`${parts.map((part) => `--${boundary}\r\n${part}\r\n`).join('')}--${boundary}--`)

describe('defects the fuzzing found', () => {
  test('a part whose data is absent (its blank line straight before the delimiter) is empty, and the delimiter is one', async () => {
    // RFC 2046: body-part := headers [CRLF *OCTET]; the blank line's CRLF begins the next delimiter.
    const body = encoder.encode('--B\r\nContent-Disposition: form-data; name="a"\r\n\r\n--B\r\nContent-Disposition: form-data; name="b"\r\n\r\nx\r\n--B--')
    expect(await comparable((await ours(body, 'B')) as Part[])).toEqual(['a=', 'b=x'])
    expect(await comparable((await bun(body, 'B')) as Array<[string, string]>)).toEqual(['a=', 'b=x'])
    // Cut anywhere, the same.
    for (let cut = 0; cut <= body.length; cut++) {
      expect(await comparable((await ours(body, 'B', [body.subarray(0, cut), body.subarray(cut)])) as Part[])).toEqual(['a=', 'b=x'])
    }
  })

  test('"; filename=" inside a quoted name is part of the name, not a parameter', async () => {
    const body = form('B', ['Content-Disposition: form-data; name="a; filename=x.png"\r\n\r\nv'])
    const parts = (await ours(body, 'B')) as Part[]
    expect(parts.map(({ name, filename }) => ({ name, filename }))).toEqual([{ name: 'a; filename=x.png', filename: null }])
    expect(await comparable(parts)).toEqual(await comparable((await bun(body, 'B')) as Array<[string, string]>))
  })

  test('a backslash in a quoted name or file name is kept, as browsers write it (WHATWG) and Bun reads it', async () => {
    const body = form('B', ['Content-Disposition: form-data; name="a\\b"; filename="C:\\x\\y.png"\r\n\r\nv'])
    const parts = (await ours(body, 'B')) as Part[]
    expect(parts.map(({ name, filename }) => ({ name, filename }))).toEqual([{ name: 'a\\b', filename: 'C:\\x\\y.png' }])
    expect(await comparable(parts)).toEqual(await comparable((await bun(body, 'B')) as Array<[string, File]>))
  })

  test('a header line that is not "Name: value" is refused, not skipped', async () => {
    const body = (line: string) => form('B', [`${line}\r\nContent-Disposition: form-data; name="a"\r\n\r\nv`])
    expect(await bun(body('no colon here'), 'B')).toMatch(/missing header colon/)
    // Bun skips these; a name that is no token (RFC 9110) is no header either, and ours refuses them too.
    for (const line of ['no colon here', ': empty name', 'Content Type: x', '--B(C): x']) {
      expect(await ours(body(line), 'B')).toMatch(/a part header line is not "Name: value"/)
    }
  })

  test('a NUL, or a CR or LF alone, in a part header is refused (Bun cuts the file name at the NUL)', async () => {
    for (const filename of ['a\0b.png', 'a\rb.png', 'a\nb.png']) {
      const body = form('B', [`Content-Disposition: form-data; name="image"; filename="${filename}"\r\n\r\nv`])
      expect(await ours(body, 'B')).toMatch(/a part header holds a NUL, CR or LF/)
    }
    const cut = (await bun(form('B', ['Content-Disposition: form-data; name="image"; filename="a\0b.png"\r\n\r\nv']), 'B')) as Array<[string, File]>
    expect(cut[0]![1].name).toBe('a')
  })

  test("a delimiter inside a part's headers, or a header given twice, is refused (Bun refuses the first)", async () => {
    const cut = encoder.encode('--B\r\nContent-Disposition: form-data; name="a\r\n--B\r\nContent-Disposition: form-data; name="b"\r\n\r\nv\r\n--B--')
    expect(await ours(cut, 'B')).toMatch(/ends before the blank line after its headers/)
    expect(await bun(cut, 'B')).toMatch(/missing header end/)
    // Cut in two anywhere, the same.
    for (let at = 0; at <= cut.length; at++) expect(await ours(cut, 'B', [cut.subarray(0, at), cut.subarray(at)])).toMatch(/ends before the blank line/)
    const twice = form('B', ['Content-Disposition: form-data; name="a"\r\nContent-Disposition: form-data; name="b"\r\n\r\nv'])
    expect(await ours(twice, 'B')).toMatch(/two Content-Disposition headers/)
    const types = form('B', ['Content-Disposition: form-data; name="a"\r\nContent-Type: text/plain\r\ncontent-type: image/png\r\n\r\nv'])
    expect(await ours(types, 'B')).toMatch(/two content-type headers/)
  })

  test('a Content-Disposition whose parameters are not "; name=value" pairs is refused', async () => {
    for (const disposition of ['form-data; nn: form-data; name="a"', 'form-data; name="a"x', 'form-data name="a"', 'form-data; name=a; name="b"']) {
      expect(await ours(form('B', [`Content-Disposition: ${disposition}\r\n\r\nv`]), 'B')).toMatch(/malformed Content-Disposition|no Content-Disposition/)
    }
    // What encoders write still reads: any case, spaces, a trailing ";", a token value, RFC 5987 filename*.
    const body = form('B', [`Content-Disposition: Form-Data ;  NAME = a ; filename*=UTF-8''%C3%A9.png; filename="e.png";\r\n\r\nv`])
    expect(((await ours(body, 'B')) as Part[]).map(({ name, filename }) => ({ name, filename }))).toEqual([{ name: 'a', filename: 'e.png' }])
  })
})

describe("fuzz: against Bun's formData() on the same body", () => {
  const BCHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'()+_,-./:=?"
  const NAMES = ['a', 'image', 'language', 'keywords', 'x y', 'é', '名前', 'a"b', 'a\\b']
  const FILENAMES = ['a.png', 'b c.gif', 'ü.jpg', '']

  /** Quoted as browsers and Bun's FormData write a name (WHATWG): " CR LF percent-encoded, nothing else escaped. */
  const quoted = (value: string) => `"${value.replaceAll('"', '%22').replaceAll('\r', '%0D').replaceAll('\n', '%0A')}"`

  /** A body as encoders write it: the boundary nowhere in the data. */
  function validBody(r: Random): { boundary: string; body: Uint8Array; parts: string[]; padded: boolean } {
    const boundary = Array.from({ length: r.range(1, 70) }, () => r.pick([...BCHARS])).join('')
    const pieces: Uint8Array[] = []
    const written: string[] = []
    let padded = false
    if (r.chance(0.2)) pieces.push(encoder.encode('a preamble\r\n'))
    const parts = r.int(6)
    for (let i = 0; i < parts; i++) {
      const filename = r.chance(0.4) ? r.pick(FILENAMES) : null
      const name = quoted(r.pick(NAMES))
      let headers = `Content-Disposition: form-data; name=${name}${filename === null ? '' : `; filename=${quoted(filename)}`}\r\n`
      if (r.chance(0.5)) headers += `Content-Type: ${r.pick(['image/png', 'text/plain', 'application/octet-stream'])}\r\n`
      let data: Uint8Array
      do {
        data = r.chance(0.5)
          ? r.bytes(r.int(400))
          : encoder.encode(r.pick(['', 'en', '\r\n', 'a\r\n-', `--${boundary.slice(0, -1)}`, `\r\n--${boundary.slice(1)}`]))
      } while (Buffer.from(data).includes(`--${boundary}`))
      // Transport padding (RFC 2046) after some delimiters.
      const padding = r.chance(0.1) ? ' \t' : ''
      padded ||= padding !== ''
      pieces.push(encoder.encode(`${i === 0 ? '' : '\r\n'}--${boundary}${padding}\r\n${headers}\r\n`), data)
      const shownName = name.slice(1, -1)
      written.push(
        filename === null
          ? `${shownName}=${new TextDecoder().decode(data)}`
          : `${shownName} file ${quoted(filename).slice(1, -1) || '-'} ${Buffer.from(data).toString('hex')}`,
      )
    }
    pieces.push(encoder.encode(`${parts === 0 ? '' : '\r\n'}--${boundary}--`))
    if (r.chance(0.2)) pieces.push(encoder.encode('\r\nan epilogue'))
    return { boundary, body: Buffer.concat(pieces), parts: written, padded }
  }

  /** Where the boundary stands other than at a line's start: Bun takes it as a delimiter there too, ours (RFC 2046) does not. */
  function boundaryMidLine(body: Uint8Array, boundary: string): boolean {
    const buffer = Buffer.from(body)
    for (let at = buffer.indexOf(`--${boundary}`); at !== -1; at = buffer.indexOf(`--${boundary}`, at + 1)) {
      if (at !== 0 && !(buffer[at - 2] === 0x0d && buffer[at - 1] === 0x0a)) return true
    }
    return false
  }

  /** Whether a close delimiter in `body` is followed by neither CRLF nor the end. */
  function junkAfterClose(body: Uint8Array, boundary: string): boolean {
    const text = Buffer.from(body).toString('latin1')
    const close = `\r\n--${boundary}--`
    for (let at = text.indexOf(close); at !== -1; at = text.indexOf(close, at + 1)) {
      const after = at + close.length
      if (after < text.length && text.slice(after, after + 2) !== '\r\n') return true
    }
    return false
  }

  /**
   * What ours refuses and Bun reads anyway, by design: Bun drops a part it cannot place (no
   * form-data disposition, no name, a line that is no header), keeps one of a header given twice,
   * decodes broken UTF-8 headers with U+FFFD and reads a delimiter line with junk after the boundary
   * as data; ours refuses the body.
   */
  const STRICTER =
    /no Content-Disposition: form-data|malformed Content-Disposition|two [\w-]+ headers|a part has no name|not valid UTF-8|not "Name: value"|a NUL, CR or LF|malformed delimiter line/

  test('3 × 400 bodies as encoders write them, fed in random chunks: the same parts', async () => {
    await fuzzCases(400, async (r) => {
      const { boundary, body, parts, padded } = validBody(r)
      const mine = await ours(body, boundary, randomChunks(r, body, 8))
      if (typeof mine === 'string') throw new Error(`ours refused a valid body (${mine}): ${JSON.stringify(Buffer.from(body).toString('latin1'))}`)
      expect(await comparable(mine)).toEqual(parts)
      // Transport padding after a delimiter Bun mistakes for the body's end (it reads no part after it); ours reads on.
      if (padded) return
      expect(await comparable(mine)).toEqual(await comparable((await bun(body, boundary)) as Array<[string, string]>))
    })
  })

  test('3 × 400 mutated bodies: the same parts, both refuse, or ours refuses for a reason named above', async () => {
    await fuzzCases(400, async (r) => {
      const valid = validBody(r)
      const { boundary } = valid
      const body = mutate(r, valid.body)
      const mine = await ours(body, boundary, randomChunks(r, body, 8))
      const theirs = await bun(body, boundary)
      const shown = JSON.stringify(Buffer.from(body).toString('latin1'))
      if (typeof mine === 'string' && typeof theirs === 'string') return
      // A boundary moved into the middle of a line by the mutation: the readers part ways there (see boundaryMidLine).
      if (boundaryMidLine(body, boundary)) return
      // A delimiter line straight after another: ours reads it as the next part's first header line (the CRLF a
      // delimiter needs before it ended the line before); Bun as a part with no headers.
      if (Buffer.from(body).includes(`--${boundary}\r\n--${boundary}`)) return
      if (Buffer.from(body).includes(`--${boundary} `) || Buffer.from(body).includes(`--${boundary}\t`)) return // transport padding, as above
      // A close delimiter followed by neither CRLF nor the end: ours ends there (what follows is the epilogue,
      // which RFC 2046 says to ignore); Bun reads on to a close delimiter it likes better.
      if (junkAfterClose(body, boundary)) return
      if (typeof mine === 'string') {
        if (!STRICTER.test(mine)) throw new Error(`ours refused (${mine}) what Bun reads: ${shown}`)
        return
      }
      if (typeof theirs === 'string') throw new Error(`ours read what Bun refuses (${theirs}): ${shown}`)
      expect(await comparable(mine)).toEqual(await comparable(theirs))
    })
  })
})
