// The image codec: sharp, over libvips with libjpeg-turbo, libwebp and libspng. It decodes a JPEG at
// ½, ¼ or ⅛ scale in the DCT and a WebP at the size wanted (shrink-on-load), resizes with SIMD, and
// encodes a baseline JPEG; all of it on the addon's own threads, off the event loop. Why it won over
// the other stacks: docs/performance.md.
//
// sharp picks the DCT scale itself, but not below a 3× reduction (a 3000×2000 photo for 1024 px is
// decoded at full size). libvips takes the scale as an option of a file name, not of a buffer, so a
// JPEG is handed to it as an in-memory file (memfd, Linux) named with `[shrink=N]`.
//
// Inside a `bun build --compile` binary, libvips (which sharp's addon links against) is embedded too
// and loaded before the addon: src/shared/embedded-library.ts.
import { dlopen, ptr } from 'bun:ffi'
import { closeSync, writeSync } from 'node:fs'
import type sharpModule from 'sharp'
import { type EmbeddedLibrary, insideCompiledBinary, loadEmbeddedLibraries } from '../shared/embedded-library'

export type Sharp = typeof sharpModule

/** This binary's libvips: the embedded files to load, each before the one that needs it. */
function embeddedLibvips(): EmbeddedLibrary[] {
  // Every platform is spelled out, each require in its own try: the bundler embeds the one that
  // `bun install` installed (the build's target's) and turns the others into requires that throw.
  try {
    return [{ name: 'libvips-cpp.so', file: require('@img/sharp-libvips-linux-x64/binary') }]
  } catch {
    // not the platform this binary was built for
  }
  try {
    return [{ name: 'libvips-cpp.so', file: require('@img/sharp-libvips-linux-arm64/binary') }]
  } catch {
    // not the platform this binary was built for
  }
  try {
    return [{ name: 'libvips-cpp.so', file: require('@img/sharp-libvips-linuxmusl-x64/binary') }]
  } catch {
    // not the platform this binary was built for
  }
  try {
    return [{ name: 'libvips-cpp.so', file: require('@img/sharp-libvips-linuxmusl-arm64/binary') }]
  } catch {
    // not the platform this binary was built for
  }
  try {
    return [{ name: 'libvips-cpp.dylib', file: require('@img/sharp-libvips-darwin-arm64/binary') }]
  } catch {
    // not the platform this binary was built for
  }
  try {
    return [{ name: 'libvips-cpp.dylib', file: require('@img/sharp-libvips-darwin-x64/binary') }]
  } catch {
    // not the platform this binary was built for
  }
  try {
    // sharp's Windows package carries the DLLs itself, outside its exports map: hence a path. The
    // addon imports them by these names.
    return [
      { name: 'libvips-42.dll', file: require('../../node_modules/@img/sharp-win32-x64/lib/libvips-42.dll') },
      { name: 'libvips-cpp-8.18.7.dll', file: require('../../node_modules/@img/sharp-win32-x64/lib/libvips-cpp-8.18.7.dll') },
    ]
  } catch {
    // not the platform this binary was built for
  }
  throw new Error(`this binary embeds no libvips for ${process.platform}-${process.arch}: build it for the platform it runs on`)
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
  // Any exported symbol will do for bun:ffi. The library stays loaded once sharp's addon uses it.
  if (insideCompiledBinary()) loadEmbeddedLibraries(embeddedLibvips, 'alttext-libvips-', { vips_version: { args: ['i32'], returns: 'i32' } })
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
