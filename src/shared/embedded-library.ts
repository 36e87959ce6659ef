// Native libraries inside a `bun build --compile` binary. Bun embeds and extracts an addon (.node) but
// not the library the addon links against, which the dynamic linker would look for beside the extracted
// addon and not find. So the binary embeds the library too; it is written to a private temporary
// folder, loaded, and the file deleted. The addon's dependency is then met by the library already
// loaded under that name: its soname on Linux, its install name on macOS, its module name on Windows.
// Used for sharp's libvips (intake/codec.ts) and ONNX Runtime (ocr/runtime.ts).
import { dlopen, type FFIFunction, ptr } from 'bun:ffi'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** An embedded library file and the name it must be loaded under. */
export type EmbeddedLibrary = { name: string; file: string }

/** Whether this code runs inside a `bun build --compile` binary (its modules live in Bun's embedded file system). */
export function insideCompiledBinary(): boolean {
  // /$bunfs/root/… on Linux and macOS, B:\~BUN\root\… on Windows.
  return /^(\/\$bunfs\/|B:[\\/]~BUN[\\/])/.test(import.meta.path)
}

/**
 * Where there are no memory maps to read (macOS, Windows), the process itself is marked once a library
 * is in it: a loaded library belongs to the process, not to one copy of a module (each Worker has its own).
 */
const processMarks = globalThis as unknown as Record<symbol, boolean | undefined>

/** Loads a library file into the process; bun:ffi's dlopen wants one exported symbol to bind. */
function loadLibrary(path: string, symbol: Record<string, FFIFunction>): void {
  if (process.platform === 'win32') {
    // LoadLibraryW, not bun:ffi's dlopen: a C++ DLL exports only mangled names.
    const kernel32 = dlopen('kernel32.dll', { LoadLibraryW: { args: ['ptr'], returns: 'ptr' } })
    const loaded = kernel32.symbols.LoadLibraryW(ptr(Buffer.from(`${path}\0`, 'utf16le')))
    kernel32.close()
    if (!loaded) throw new Error(`could not load ${path}`)
    return
  }
  dlopen(path, symbol)
}

/**
 * Loads `libraries` (each before the one that needs it) once per process. `folderPrefix` names the
 * temporary folder, which the process's memory maps show while the library is loaded (Linux).
 */
export function loadEmbeddedLibraries(libraries: () => EmbeddedLibrary[], folderPrefix: string, symbol: Record<string, FFIFunction>): void {
  const mark = Symbol.for(`alttext.${folderPrefix}loaded`)
  const loaded = process.platform === 'linux' ? readFileSync('/proc/self/maps', 'utf8').includes(`/${folderPrefix}`) : processMarks[mark] === true
  if (loaded) return
  const files = libraries()
  const dir = mkdtempSync(join(tmpdir(), folderPrefix))
  try {
    for (const { name, file } of files) {
      const path = join(dir, name)
      writeFileSync(path, readFileSync(file), { mode: 0o500 })
      loadLibrary(path, symbol)
    }
    processMarks[mark] = true
  } finally {
    try {
      rmSync(dir, { recursive: true, force: true })
    } catch {
      // Windows: a loaded DLL's file cannot be deleted while the process runs.
    }
  }
}
