// `import x from '...' with { type: 'file' }` yields a path (embedded in the compiled binary).
declare module '*.css' {
  const path: string
  export default path
}
declare module '*.png' {
  const path: string
  export default path
}
declare module '*.onnx' {
  const path: string
  export default path
}
