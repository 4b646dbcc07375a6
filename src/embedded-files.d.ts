// Files imported `with { type: 'file' }` (a path, embedded by `bun build --compile`) or `{ type: 'text' }`.
declare module '*.wasm' {
  const path: string
  export default path
}
declare module '*.data' {
  const path: string
  export default path
}
declare module '*.sql' {
  const text: string
  export default text
}
declare module '*.css' {
  const path: string
  export default path
}
declare module '*/face-capture.js' {
  const path: string
  export default path
}
declare module '*/passkey.js' {
  const path: string
  export default path
}
declare module '*/credential.js' {
  const path: string
  export default path
}
declare module '*.bin' {
  const path: string
  export default path
}
declare module '*/human.node-wasm.js' {
  export const Human: new (config: Partial<import('@vladmandic/human').Config>) => import('@vladmandic/human').Human
}
