// ONNX Runtime for the OCR worker: onnxruntime-node, whose addon links a native library (libonnxruntime).
// Inside a compiled binary that library is embedded and loaded first: src/shared/embedded-library.ts.
//
// onnxruntime-node carries every platform's files in one package, so which one is embedded follows
// from process.platform and process.arch, which `bun build` folds to the target's: the other branches
// are dropped, with their files. It ships no macOS x64 build: there, OCR is unavailable.
import { type EmbeddedLibrary, insideCompiledBinary, loadEmbeddedLibraries } from '../shared/embedded-library'

type Ort = typeof import('onnxruntime-node')

function embeddedOnnxRuntime(): EmbeddedLibrary[] {
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

/** onnxruntime-node, loaded on first use (with its native library when inside a compiled binary). */
export async function loadOnnxRuntime(): Promise<Ort> {
  // A separate branch, so that a macOS x64 build drops the import (its addon does not exist).
  if (process.platform === 'darwin' && process.arch === 'x64') throw unsupported()
  else {
    // bun:ffi wants a symbol: OrtGetApiBase is ONNX Runtime's one C entry point.
    if (insideCompiledBinary()) loadEmbeddedLibraries(embeddedOnnxRuntime, 'alttext-onnxruntime-', { OrtGetApiBase: { args: [], returns: 'ptr' } })
    return await import('onnxruntime-node')
  }
}
