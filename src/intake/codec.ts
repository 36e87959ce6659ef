// The image codec: sharp, over libvips with libjpeg-turbo, libwebp and libspng. It decodes a JPEG at
// ½, ¼ or ⅛ scale in the DCT and a WebP at the size wanted (shrink-on-load), resizes with SIMD, and
// encodes a baseline JPEG; all of it on the addon's own threads, off the event loop. Why it won over
// the other stacks: docs/performance.md.
//
// sharp picks the DCT scale itself, but not below a 3× reduction (a 3000×2000 photo for 1024 px is
// decoded at full size). libvips takes the scale as an option of a file name, not of a buffer, so a
// JPEG is handed to it as an in-memory file (memfd, Linux) named with `[shrink=N]`.
//
// Inside a `bun build --compile` binary, Bun embeds sharp's addon and extracts it at run time, but not
// the libvips library that the addon links against, which the dynamic linker would look for beside the
// extracted addon and not find. So the binary embeds libvips too (the requires below, which Bun's
// bundler turns into embedded files), writes it to a private temporary folder, loads it and deletes
// the file. The addon's dependency is then met by the library already loaded under that name.
import { dlopen, ptr } from 'bun:ffi'
import { closeSync, mkdtempSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type sharpModule from 'sharp'

export type Sharp = typeof sharpModule

/** Whether this code runs inside a `bun build --compile` binary (its modules live in Bun's embedded file system). */
function insideCompiledBinary(): boolean {
  return import.meta.path.startsWith('/$bunfs/')
}

/** Where this binary's libvips is embedded. */
function embeddedLibvipsFile(): string {
  // Every Linux platform is spelled out, each require in its own try: the bundler embeds the one that
  // `bun install` installed (the build machine's) and turns the others into requires that throw.
  try {
    return require('@img/sharp-libvips-linux-x64/binary')
  } catch {
    // not the platform this binary was built on
  }
  try {
    return require('@img/sharp-libvips-linux-arm64/binary')
  } catch {
    // not the platform this binary was built on
  }
  try {
    return require('@img/sharp-libvips-linuxmusl-x64/binary')
  } catch {
    // not the platform this binary was built on
  }
  try {
    return require('@img/sharp-libvips-linuxmusl-arm64/binary')
  } catch {
    // not the platform this binary was built on
  }
  throw new Error(`this binary embeds no libvips for ${process.platform}-${process.arch}: build it on Linux, on the platform it runs on`)
}

/** The name of the folders libvips is written to; the process's memory maps show it while the library is loaded. */
const LIBVIPS_DIR_PREFIX = 'alttext-libvips-'

/** Whether an earlier call loaded the embedded libvips into this process. */
function libvipsLoaded(): boolean {
  return readFileSync('/proc/self/maps', 'utf8').includes(`/${LIBVIPS_DIR_PREFIX}`)
}

/** Loads the embedded libvips once per process, so that sharp's addon finds it. */
function loadEmbeddedLibvips(): void {
  const file = embeddedLibvipsFile()
  if (libvipsLoaded()) return
  const dir = mkdtempSync(join(tmpdir(), LIBVIPS_DIR_PREFIX))
  try {
    const path = join(dir, 'libvips-cpp.so')
    writeFileSync(path, readFileSync(file), { mode: 0o500 })
    // Any exported symbol will do: bun:ffi wants one. The library stays loaded once sharp's addon uses it.
    dlopen(path, { vips_version: { args: ['i32'], returns: 'i32' } })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Bytes as a file that only this process can see, for as long as it is open. */
export type MemoryFile = { path: string; close(): void }

export type Codec = {
  sharp: Sharp
  /** `bytes` as an in-memory file, or null where the system has none (then sharp reads the buffer). */
  memoryFile(bytes: Uint8Array): MemoryFile | null
  close(): void
}

const MFD_CLOEXEC = 1

/** memfd_create(2) from the C library, or null (not Linux with glibc, or refused). */
function memoryFiles(): { make(bytes: Uint8Array): MemoryFile | null; close(): void } | null {
  if (process.platform !== 'linux') return null
  let libc: ReturnType<typeof dlopen<{ memfd_create: { args: ['ptr', 'u32']; returns: 'i32' } }>>
  try {
    libc = dlopen('libc.so.6', { memfd_create: { args: ['ptr', 'u32'], returns: 'i32' } })
  } catch {
    return null
  }
  const name = Buffer.from('alttext-image\0')
  return {
    make(bytes) {
      const fd = libc.symbols.memfd_create(ptr(name), MFD_CLOEXEC)
      if (fd < 0) return null
      try {
        writeSync(fd, bytes)
      } catch {
        closeSync(fd)
        return null
      }
      return { path: `/proc/self/fd/${fd}`, close: () => closeSync(fd) }
    },
    close: () => libc.close(),
  }
}

/** sharp, loaded (with libvips when inside a compiled binary) and set up for the intake; close() when the intake closes. */
export function openCodec(): Codec {
  if (insideCompiledBinary()) loadEmbeddedLibvips()
  // Required, not imported: sharp's CommonJS build names each platform's addon in a plain require,
  // which the bundler embeds; its ES module build hides them from the bundler. Loaded once per process
  // (the module cache), set up again by each intake: the same settings.
  const sharp = require('sharp') as Sharp
  // Each image is new bytes, and a memory file's name is reused: libvips' cache of recent operations
  // would serve an old image for a new one, and hold memory outside the decode budget.
  sharp.cache(false)
  // One thread per image: the intake runs several at once already, and threads beyond the cores only
  // take time from the event loop.
  sharp.concurrency(1)
  const files = memoryFiles()
  return { sharp, memoryFile: (bytes) => files?.make(bytes) ?? null, close: () => files?.close() }
}
