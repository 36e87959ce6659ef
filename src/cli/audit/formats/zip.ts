// The ZIP container of an EPUB, read and written with its limits in view. fflate inflates and deflates;
// the directory is read here because a fixed book must keep every other entry as it was (the same
// compressed bytes, method, dates and order), which needs each entry's raw bytes and offsets, and
// because the limits are checked on the directory before anything is inflated: too many entries,
// declared sizes too large (a zip bomb), names that leave the book, encryption, ZIP64 and duplicates
// are refused, and so are entries whose bytes overlap (one compressed range read as many entries). An
// inflated entry is bounded by its declared size, then checked against its CRC-32; each entry is read
// once per archive and kept, and what a book inflates in all is capped.
import { deflateSync, inflateSync } from 'fflate'

/** Entries in one book: a novel has a few hundred, a picture book a few thousand. */
export const MAX_BOOK_ENTRIES = 10_000
/** One entry, inflated. */
export const MAX_ENTRY_BYTES = 64 * 1024 * 1024
/** All entries together, inflated, as declared in the directory. */
export const MAX_BOOK_UNPACKED_BYTES = 1024 * 1024 * 1024
/**
 * What one book may inflate in all, as read (content documents and images; entries never read do not
 * count): text deflates a few times over, pictures hardly, so a real book stays far below it.
 */
export const MAX_BOOK_INFLATED_BYTES = 256 * 1024 * 1024

export class ZipError extends Error {}

export type ZipEntry = {
  name: string
  /** 0 stored, 8 deflated. */
  method: number
  flags: number
  crc: number
  compressedSize: number
  size: number
  /** The entry's bytes as they are in the file: local header, data, data descriptor. */
  localStart: number
  localEnd: number
  dataStart: number
  /** Its central directory record. */
  centralStart: number
  centralEnd: number
  /** The local header's extra field is not empty. */
  localExtra: boolean
}

export type ZipArchive = {
  bytes: Uint8Array
  entries: ZipEntry[]
  byName: Map<string, ZipEntry>
  comment: Uint8Array
  /** Entries read so far, by name: each is inflated and checked once, however often it is used. */
  contents: Map<string, Uint8Array>
  /** Bytes inflated so far (stored entries are read in place and not counted). */
  inflated: number
}

const EOCD = 0x06054b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50
const DESCRIPTOR = 0x08074b50
const names = new TextDecoder('utf-8', { fatal: true })

/** A name that stays inside the book: relative, no "..", no backslash, no drive, no NUL. */
function safeName(name: string): boolean {
  if (name === '' || name.startsWith('/') || name.includes('\\') || name.includes('\0') || /^[a-z]:/iu.test(name)) return false
  return !name.split('/').some((segment) => segment === '..' || segment === '.')
}

export function readZip(bytes: Uint8Array): ZipArchive {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const u16 = (at: number) => view.getUint16(at, true)
  const u32 = (at: number) => view.getUint32(at, true)
  if (bytes.length < 22) throw new ZipError('not a ZIP file')
  let end = -1
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - 0xffff); at--) {
    if (u32(at) === EOCD && at + 22 + u16(at + 20) === bytes.length) {
      end = at
      break
    }
  }
  if (end < 0) throw new ZipError('not a ZIP file (no end of central directory)')
  const count = u16(end + 10)
  const directorySize = u32(end + 12)
  const directoryStart = u32(end + 16)
  if (u16(end + 4) !== 0 || u16(end + 6) !== 0 || count !== u16(end + 8)) throw new ZipError('a ZIP split over several disks is not read')
  if (count === 0xffff || directoryStart === 0xffffffff || directorySize === 0xffffffff) throw new ZipError('ZIP64 books are not read')
  if (count > MAX_BOOK_ENTRIES) throw new ZipError(`refused: ${count} entries, more than ${MAX_BOOK_ENTRIES}`)
  if (directoryStart + directorySize > end) throw new ZipError('damaged ZIP: the central directory runs past its end')

  const entries: ZipEntry[] = []
  const byName = new Map<string, ZipEntry>()
  let declared = 0
  let at = directoryStart
  for (let index = 0; index < count; index++) {
    if (at + 46 > end || u32(at) !== CENTRAL) throw new ZipError('damaged ZIP: a central directory record is missing')
    const flags = u16(at + 8)
    const method = u16(at + 10)
    const crc = u32(at + 16)
    const compressedSize = u32(at + 20)
    const size = u32(at + 24)
    const nameLength = u16(at + 28)
    const centralEnd = at + 46 + nameLength + u16(at + 30) + u16(at + 32)
    const localStart = u32(at + 42)
    if (centralEnd > end) throw new ZipError('damaged ZIP: a central directory record runs past its end')
    let name: string
    try {
      name = names.decode(bytes.subarray(at + 46, at + 46 + nameLength))
    } catch {
      throw new ZipError('refused: an entry name is not UTF-8')
    }
    if (!safeName(name)) throw new ZipError(`refused: the entry name ${JSON.stringify(name.slice(0, 200))} leaves the book`)
    if (byName.has(name)) throw new ZipError(`refused: two entries are named ${JSON.stringify(name)}`)
    if (flags & 1) throw new ZipError(`refused: ${name} is encrypted`)
    if (method !== 0 && method !== 8) throw new ZipError(`${name} uses compression method ${method}; only stored and deflated entries are read`)
    if (size > MAX_ENTRY_BYTES) throw new ZipError(`refused: ${name} declares ${size} bytes, more than ${MAX_ENTRY_BYTES} (a zip bomb?)`)
    declared += size
    if (declared > MAX_BOOK_UNPACKED_BYTES) throw new ZipError(`refused: the entries declare more than ${MAX_BOOK_UNPACKED_BYTES} bytes in all (a zip bomb?)`)
    if (method === 0 && compressedSize !== size) throw new ZipError(`damaged ZIP: the stored entry ${name} has two sizes`)
    if (localStart + 30 > directoryStart || u32(localStart) !== LOCAL) throw new ZipError(`damaged ZIP: the local header of ${name} is missing`)
    const dataStart = localStart + 30 + u16(localStart + 26) + u16(localStart + 28)
    let localEnd = dataStart + compressedSize
    if (localEnd > directoryStart) throw new ZipError(`damaged ZIP: ${name} runs past the central directory`)
    if (flags & 8) localEnd += localEnd + 4 <= directoryStart && u32(localEnd) === DESCRIPTOR ? 16 : 12
    if (localEnd > directoryStart) throw new ZipError(`damaged ZIP: ${name} runs past the central directory`)
    const entry: ZipEntry = {
      name,
      method,
      flags,
      crc,
      compressedSize,
      size,
      localStart,
      localEnd,
      dataStart,
      centralStart: at,
      centralEnd,
      localExtra: u16(localStart + 28) !== 0,
    }
    entries.push(entry)
    byName.set(name, entry)
    at = centralEnd
  }
  // Two entries over the same bytes make a small file inflate (and --fix copy) many times over.
  const byOffset = entries.toSorted((a, b) => a.localStart - b.localStart)
  for (let index = 1; index < byOffset.length; index++) {
    const before = byOffset[index - 1]!
    const entry = byOffset[index]!
    if (entry.localStart < before.localEnd) throw new ZipError(`refused: the entries ${before.name} and ${entry.name} overlap (a zip bomb?)`)
  }
  return { bytes, entries, byName, comment: bytes.slice(end + 22), contents: new Map(), inflated: 0 }
}

/**
 * An entry's content: inflated into a buffer of its declared size, which must then hold exactly it.
 * Read once per archive; later calls give the same bytes.
 */
export function entryData(archive: ZipArchive, entry: ZipEntry): Uint8Array {
  const known = archive.contents.get(entry.name)
  if (known) return known
  const raw = archive.bytes.subarray(entry.dataStart, entry.dataStart + entry.compressedSize)
  let data: Uint8Array
  if (entry.method === 0) data = raw
  else {
    if (archive.inflated + entry.size > MAX_BOOK_INFLATED_BYTES) {
      throw new ZipError(`refused: reading ${entry.name} would inflate more than ${MAX_BOOK_INFLATED_BYTES} bytes of the book in all (a zip bomb?)`)
    }
    archive.inflated += entry.size
    try {
      // fflate writes no further than the buffer given: a lying size cannot make it allocate more.
      data = inflateSync(raw, { out: new Uint8Array(entry.size) })
    } catch (error) {
      throw new ZipError(`damaged ZIP: ${entry.name} cannot be inflated (${(error as Error).message})`)
    }
  }
  if (data.length !== entry.size || Bun.hash.crc32(data) !== entry.crc) throw new ZipError(`damaged ZIP: ${entry.name} does not match its size and CRC-32`)
  archive.contents.set(entry.name, data)
  return data
}

/** Lets go of the entries read so far (the book is done with); the count of bytes inflated stays. */
export function releaseContents(archive: ZipArchive): void {
  archive.contents.clear()
}

const encoder = new TextEncoder()

/**
 * The archive with `replaced` entries' contents changed (deflated anew) and every other entry copied
 * as it was, in the same order: local header, compressed data and directory record byte for byte
 * (only the offsets move). `first` is put first, stored, without extra field (an EPUB's mimetype).
 */
export function writeZip(archive: ZipArchive, replaced: Map<string, Uint8Array>, first?: string): Uint8Array {
  const { bytes } = archive
  const src = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const parts: Uint8Array[] = []
  const central: Uint8Array[] = []
  let offset = 0
  const ordered = first
    ? [...archive.entries.filter((entry) => entry.name === first), ...archive.entries.filter((entry) => entry.name !== first)]
    : archive.entries
  for (const entry of ordered) {
    const content = replaced.get(entry.name)
    const rewriteFirst = entry.name === first && (entry.method !== 0 || entry.localExtra || (entry.flags & 8) !== 0)
    if (content === undefined && !rewriteFirst) {
      parts.push(bytes.subarray(entry.localStart, entry.localEnd))
      const record = bytes.slice(entry.centralStart, entry.centralEnd)
      new DataView(record.buffer).setUint32(42, offset, true)
      central.push(record)
      offset += entry.localEnd - entry.localStart
      continue
    }
    const data = content ?? entryData(archive, entry)
    const stored = entry.name === first
    const packed = stored ? data : deflateSync(data, { level: 9 })
    const name = encoder.encode(entry.name)
    const crc = Bun.hash.crc32(data)
    // Bit 11: the name is UTF-8. No data descriptor: the sizes are known.
    const flags = (entry.flags & 0x0800) | 0x0800
    const local = new Uint8Array(30 + name.length)
    const l = new DataView(local.buffer)
    l.setUint32(0, LOCAL, true)
    l.setUint16(4, 20, true)
    l.setUint16(6, flags, true)
    l.setUint16(8, stored ? 0 : 8, true)
    l.setUint32(10, src.getUint32(entry.centralStart + 12, true), true) // time and date as they were
    l.setUint32(14, crc, true)
    l.setUint32(18, packed.length, true)
    l.setUint32(22, data.length, true)
    l.setUint16(26, name.length, true)
    local.set(name, 30)
    parts.push(local, packed)
    const record = new Uint8Array(46 + name.length)
    const c = new DataView(record.buffer)
    record.set(bytes.subarray(entry.centralStart, entry.centralStart + 46))
    c.setUint16(6, 20, true)
    c.setUint16(8, flags, true)
    c.setUint16(10, stored ? 0 : 8, true)
    c.setUint32(16, crc, true)
    c.setUint32(20, packed.length, true)
    c.setUint32(24, data.length, true)
    c.setUint16(28, name.length, true)
    c.setUint16(30, 0, true)
    c.setUint16(32, 0, true)
    c.setUint32(42, offset, true)
    record.set(name, 46)
    central.push(record)
    offset += local.length + packed.length
  }
  const directorySize = central.reduce((sum, record) => sum + record.length, 0)
  const tail = new Uint8Array(22 + archive.comment.length)
  const t = new DataView(tail.buffer)
  t.setUint32(0, EOCD, true)
  t.setUint16(8, ordered.length, true)
  t.setUint16(10, ordered.length, true)
  t.setUint32(12, directorySize, true)
  t.setUint32(16, offset, true)
  t.setUint16(20, archive.comment.length, true)
  tail.set(archive.comment, 22)
  const out = new Uint8Array(offset + directorySize + tail.length)
  let at = 0
  for (const part of [...parts, ...central, tail]) {
    out.set(part, at)
    at += part.length
  }
  return out
}
