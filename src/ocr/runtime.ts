// ONNX Runtime for the OCR worker: onnxruntime-node, whose addon links a native library (libonnxruntime)
// that it expects beside itself. Inside a `bun build --compile` binary, Bun embeds and extracts the
// addon but not that library, so the binary embeds it too and loads it from a private temporary folder
// before the addon (the trick of src/intake/codec.ts; the addon's dependency is then met by the library
// already loaded under its soname / install name / module name).
//
// onnxruntime-node carries every platform's files in one package, so which one is embedded follows
// from process.platform and process.arch, which `bun build` folds to the target's: the other branches
// are dropped, with their files. It ships no macOS x64 build: there, OCR is unavailable.
import { dlopen, ptr } from 'bun:ffi'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

type Ort = typeof import('onnxruntime-node')

/** Whether this code runs inside a `bun build --compile` binary. */
function insideCompiledBinary(): boolean {
  return /^(\/\$bunfs\/|B:[\\/]~BUN[\\/])/.test(import.meta.path)
}

/** An embedded library file and the name it must be loaded under, each before the one that needs it. */
type Library = { name: string; file: string }

function embeddedOnnxRuntime(): Library[] {
  if (process.platform === 'linux' && process.arch === 'x64')
    return [{ name: 'libonnxruntime.so.1', file: require('../../node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1') }]
  if (process.platform === 'linux' && process.arch === 'arm64')
    return [{ name: 'libonnxruntime.so.1', file: require('../../node_modules/onnxruntime-node/bin/napi-v6/linux/arm64/libonnxruntime.so.1') }]
  if (process.platform === 'darwin' && process.arch === 'arm64')
    return [{ name: 'libonnxruntime.1.dylib', file: require('../../node_modules/onnxruntime-node/bin/napi-v6/darwin/arm64/libonnxruntime.1.dylib') }]
  if (process.platform === 'win32' && process.arch === 'x64')
    // onnxruntime.dll imports DirectML.dll (its GPU provider, never asked for here) by name.
    return [
      { name: 'DirectML.dll', file: require('../../node_modules/onnxruntime-node/bin/napi-v6/win32/x64/DirectML.dll') },
      { name: 'onnxruntime.dll', file: require('../../node_modules/onnxruntime-node/bin/napi-v6/win32/x64/onnxruntime.dll') },
    ]
  throw unsupported()
}

const unsupported = () => new Error(`OCR is not available on ${process.platform}-${process.arch}: onnxruntime-node ships no build for it`)

function loadLibrary(path: string): void {
  if (process.platform === 'win32') {
    const kernel32 = dlopen('kernel32.dll', { LoadLibraryW: { args: ['ptr'], returns: 'ptr' } })
    const loaded = kernel32.symbols.LoadLibraryW(ptr(Buffer.from(`${path}\0`, 'utf16le')))
    kernel32.close()
    if (!loaded) throw new Error(`could not load ${path}`)
    return
  }
  // bun:ffi wants a symbol: OrtGetApiBase is ONNX Runtime's one C entry point.
  dlopen(path, { OrtGetApiBase: { args: [], returns: 'ptr' } })
}

/** Marks the process once the library is in it: a Worker's module copy must not load it twice. */
const ONNXRUNTIME_LOADED = Symbol.for('alttext.onnxruntime-loaded')
const processMarks = globalThis as unknown as Record<symbol, boolean | undefined>

function loadEmbeddedOnnxRuntime(): void {
  if (processMarks[ONNXRUNTIME_LOADED] || (process.platform === 'linux' && readFileSync('/proc/self/maps', 'utf8').includes('/alttext-onnxruntime-'))) return
  const libraries = embeddedOnnxRuntime()
  const dir = mkdtempSync(join(tmpdir(), 'alttext-onnxruntime-'))
  try {
    for (const { name, file } of libraries) {
      const path = join(dir, name)
      writeFileSync(path, readFileSync(file), { mode: 0o500 })
      loadLibrary(path)
    }
    processMarks[ONNXRUNTIME_LOADED] = true
  } finally {
    try {
      rmSync(dir, { recursive: true, force: true })
    } catch {
      // Windows: a loaded DLL's file cannot be deleted while the process runs.
    }
  }
}

/** onnxruntime-node, loaded on first use (with its native library when inside a compiled binary). */
export async function loadOnnxRuntime(): Promise<Ort> {
  // A separate branch, so that a macOS x64 build drops the import (its addon does not exist).
  if (process.platform === 'darwin' && process.arch === 'x64') throw unsupported()
  else {
    if (insideCompiledBinary()) loadEmbeddedOnnxRuntime()
    return await import('onnxruntime-node')
  }
}
