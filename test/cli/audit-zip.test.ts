// The ZIP directory reader of `alttext audit` (EPUBs) as a pure function, fuzzed against fflate's
// unzipSync: on ZIPs fflate writes (whole, or streamed with data descriptors) the same entries and
// bytes; on mutated ones the same bytes, or a ZipError, never another exception or a hang.
import { describe, expect, test } from 'bun:test'
import { type Unzipped, unzipSync, Zip, type Zippable, ZipDeflate, ZipPassThrough, zipSync } from 'fflate'
import { entryData, readZip, ZipError } from '../../src/cli/audit/formats/zip.ts'
import { fuzzCases, mutate, type Random } from '../support/fuzz.ts'

const NAMES = ['mimetype', 'META-INF/container.xml', 'OEBPS/content.opf', 'OEBPS/ch1.xhtml', 'images/a b.png', 'é/名前.txt', 'x', 'dir/', 'a/b/c/d.css']

/** Contents of kinds that deflate differently: empty, text, runs, noise. */
function content(r: Random): Uint8Array {
  switch (r.int(4)) {
    case 0:
      return new Uint8Array(0)
    case 1:
      return new TextEncoder().encode('<p>chapter</p>\n'.repeat(r.range(1, 200)))
    case 2:
      return new Uint8Array(r.range(1, 5000)).fill(r.int(256))
    default:
      return r.bytes(r.range(1, 3000))
  }
}

/** A ZIP as fflate writes it, and what it holds. */
function makeZip(r: Random): { zip: Uint8Array; files: Map<string, Uint8Array> } {
  const files = new Map<string, Uint8Array>()
  const count = r.range(1, 6)
  for (let i = 0; i < count; i++) files.set(r.pick(NAMES), content(r))
  for (const name of files.keys()) if (name.endsWith('/')) files.set(name, new Uint8Array(0))
  if (r.chance(0.6)) {
    const input: Zippable = Object.fromEntries([...files].map(([name, data]) => [name, [data, { level: r.pick([0, 1, 6, 9] as const) }]]))
    return { zip: zipSync(input), files }
  }
  // Streamed: sizes and CRC-32 in a data descriptor after each entry (flag bit 3).
  const chunks: Uint8Array[] = []
  const zip = new Zip((error, chunk) => {
    if (error) throw error
    chunks.push(chunk)
  })
  for (const [name, data] of files) {
    const file = r.chance(0.5) ? new ZipDeflate(name, { level: 6 }) : new ZipPassThrough(name)
    zip.add(file)
    file.push(data, true)
  }
  zip.end()
  return { zip: Buffer.concat(chunks), files }
}

/** Every entry of `zip` by our reader: name → bytes, or the ZipError it gave. Anything else thrown is a crash, and fails. */
function ours(zip: Uint8Array): Map<string, Uint8Array | ZipError> | ZipError {
  let archive: ReturnType<typeof readZip>
  try {
    archive = readZip(zip)
  } catch (error) {
    if (error instanceof ZipError) return error
    throw error
  }
  const entries = new Map<string, Uint8Array | ZipError>()
  for (const entry of archive.entries) {
    try {
      entries.set(entry.name, entryData(archive, entry))
    } catch (error) {
      if (!(error instanceof ZipError)) throw error
      entries.set(entry.name, error)
    }
  }
  return entries
}

/** fflate's reading, skipping entries that declare more than 1 MB (it would allocate what they declare). */
function theirs(zip: Uint8Array): Unzipped | null {
  try {
    return unzipSync(zip, { filter: (file) => file.originalSize <= 1024 * 1024 })
  } catch {
    return null
  }
}

describe('ZIPs as fflate writes them', () => {
  test('3 × 150: the same entries, in the same order, with the same bytes', async () => {
    await fuzzCases(150, (r) => {
      const { zip, files } = makeZip(r)
      const read = ours(zip)
      if (read instanceof ZipError) throw new Error(`refused a valid ZIP: ${read.message}`)
      expect([...read.keys()]).toEqual([...files.keys()])
      for (const [name, data] of files) expect(read.get(name)).toEqual(data)
      const reference = theirs(zip)!
      for (const [name, data] of read) expect(data).toEqual(reference[name]!)
    })
  })

  test('names that leave the book are refused, though fflate unpacks them', () => {
    for (const name of ['../x', '/abs', 'a\\b', 'C:/x', 'a/./b', 'a/../../b']) {
      const zip = zipSync({ [name]: new Uint8Array([1]) })
      expect(Object.keys(unzipSync(zip))).toEqual([name])
      expect(ours(zip)).toBeInstanceOf(ZipError)
    }
  })
})

/** `zip` with one field of a record (local header, directory record, end of directory) set to a value at the edge. */
function mutateField(r: Random, zip: Uint8Array): Uint8Array {
  const out = zip.slice()
  const view = new DataView(out.buffer)
  const records: number[] = []
  for (let at = 0; at + 4 <= out.length; at++) {
    const signature = view.getUint32(at, true)
    if (signature === 0x04034b50 || signature === 0x02014b50 || signature === 0x06054b50) records.push(at)
  }
  const at = r.pick(records) + r.int(23) * 2
  const wide = r.chance(0.5) && at + 4 <= out.length
  if (at + (wide ? 4 : 2) > out.length) return out
  const old = wide ? view.getUint32(at, true) : view.getUint16(at, true)
  const max = wide ? 0xffffffff : 0xffff
  const value = r.pick([0, 1, max, max - 1, old + 1, old - 1, old + r.range(2, 64), r.int(out.length), out.length]) & max
  if (wide) view.setUint32(at, value >>> 0, true)
  else view.setUint16(at, value, true)
  return out
}

describe('mutated ZIPs', () => {
  test('3 × 400: every entry read is the bytes fflate reads, or a ZipError; never a crash', async () => {
    await fuzzCases(400, (r) => {
      const { zip } = makeZip(r)
      const mutated = r.chance(0.4) ? mutateField(r, zip) : r.chance(0.3) ? zip.slice(0, r.int(zip.length)) : mutate(r, zip, 3)
      const read = ours(mutated)
      if (read instanceof ZipError) return
      const reference = theirs(mutated)
      for (const [name, data] of read) {
        if (data instanceof ZipError) continue
        // fflate checks no CRC-32, so where it reads at all it must agree with what ours has verified.
        if (reference && name in reference) expect(data).toEqual(reference[name]!)
      }
    })
  })
})
