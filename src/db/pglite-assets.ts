// PGlite reads these next to its own module by default, and a compiled binary has no such files on disk.
// Imported as files, `bun build --compile` embeds them, and development resolves the same paths. The
// package's exports map does not list them, hence the path into node_modules.
import initdbWasm from '../../node_modules/@electric-sql/pglite/dist/initdb.wasm' with { type: 'file' }
import pgliteData from '../../node_modules/@electric-sql/pglite/dist/pglite.data' with { type: 'file' }
import pgliteWasm from '../../node_modules/@electric-sql/pglite/dist/pglite.wasm' with { type: 'file' }

type PgliteAssets = { pgliteWasmModule: WebAssembly.Module; initdbWasmModule: WebAssembly.Module; fsBundle: Blob }

let compiled: Promise<PgliteAssets> | undefined

/** The compiled WASM modules and the file-system bundle, compiled once per process and shared. */
export function pgliteAssets(): Promise<PgliteAssets> {
  compiled ??= (async () => ({
    pgliteWasmModule: await WebAssembly.compile(await Bun.file(pgliteWasm).arrayBuffer()),
    initdbWasmModule: await WebAssembly.compile(await Bun.file(initdbWasm).arrayBuffer()),
    fsBundle: Bun.file(pgliteData),
  }))()
  return compiled
}
