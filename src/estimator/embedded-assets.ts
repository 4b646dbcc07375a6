// The face models and the tfjs WASM binaries, imported as files so that `bun build --compile` embeds
// them (19 MB). From a checkout these are the installed packages' own files; inside the binary they live
// in its virtual file system, which tfjs cannot read, so they are copied out to a temporary folder.
import { createHash } from 'node:crypto'
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import blazefaceBin from '../../node_modules/@vladmandic/human/models/blazeface.bin' with { type: 'file' }
import blazefaceJson from '../../node_modules/@vladmandic/human/models/blazeface.json' with { type: 'file' }
import facemeshBin from '../../node_modules/@vladmandic/human/models/facemesh.bin' with { type: 'file' }
import facemeshJson from '../../node_modules/@vladmandic/human/models/facemesh.json' with { type: 'file' }
import ageBin from './models/faceres-deep.bin' with { type: 'file' }
import ageJson from './models/faceres-deep.json' with { type: 'file' }
import wasmSimd from '../../node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm' with { type: 'file' }
import wasmThreaded from '../../node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm' with { type: 'file' }
import wasmPlain from '../../node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm' with { type: 'file' }

// By their original names: a model's JSON names its weights file, and tfjs looks for the wasm by name,
// while the binary stores each file under a hashed name. (TypeScript types a .json import as its
// contents; with `type: 'file'` Bun gives its path.)
const models: Record<string, string> = {
  'blazeface.bin': blazefaceBin,
  'blazeface.json': blazefaceJson as unknown as string,
  'facemesh.bin': facemeshBin,
  'facemesh.json': facemeshJson as unknown as string,
}
/** The age model, which this repository carries (src/estimator/models/, docs/accuracy.md). */
const ageModel: Record<string, string> = {
  'faceres-deep.bin': ageBin,
  'faceres-deep.json': ageJson as unknown as string,
}
const wasm: Record<string, string> = {
  'tfjs-backend-wasm-simd.wasm': wasmSimd,
  'tfjs-backend-wasm-threaded-simd.wasm': wasmThreaded,
  'tfjs-backend-wasm.wasm': wasmPlain,
}
const marker = models['blazeface.json']!

/**
 * Folders holding the models and the `.wasm` files, on a real file system. Inside the binary they are
 * written once to a folder named after the embedded files (whose names carry content hashes), so every
 * start and every worker reuses it; it is built aside and renamed into place, so workers starting
 * together never see half of it.
 */
export function faceAssetFolders(): { modelsDir: string; wasmDir: string; ageModelDir: string } {
  const embedded = marker.startsWith('/$bunfs/') || marker.startsWith('B:/~BUN/')
  if (!embedded) return { modelsDir: dirname(marker), wasmDir: dirname(wasm['tfjs-backend-wasm.wasm']!), ageModelDir: dirname(ageModel['faceres-deep.json']!) }
  const version = createHash('sha256').update(JSON.stringify([models, ageModel, wasm])).digest('hex').slice(0, 16)
  const root = join(tmpdir(), `ofage-face-${version}`)
  const folders = { modelsDir: join(root, 'models'), wasmDir: join(root, 'wasm'), ageModelDir: join(root, 'models') }
  placeOnce(root, (staging) => {
    mkdirSync(join(staging, 'models'))
    mkdirSync(join(staging, 'wasm'))
    for (const [name, file] of Object.entries({ ...models, ...ageModel })) writeFileSync(join(staging, 'models', name), readFileSync(file))
    for (const [name, file] of Object.entries(wasm)) writeFileSync(join(staging, 'wasm', name), readFileSync(file))
  })
  return folders
}

/**
 * Makes the folder `root` once, with what `fill` writes into it: filled aside and renamed into place, so
 * that workers starting together never see half of it; one that finds it there writes nothing. What it
 * holds is loaded as models and as a library, so a folder found there is used only if it is this user's
 * own, a real folder that no one else may write: in a shared /tmp another user could have made it first.
 */
export function placeOnce(root: string, fill: (staging: string) => void): void {
  if (!existsSync(root)) {
    const staging = mkdtempSync(join(tmpdir(), 'ofage-staging-'))
    fill(staging)
    try {
      renameSync(staging, root)
    } catch {
      // Another worker put it in place first.
      rmSync(staging, { recursive: true, force: true })
    }
  }
  const found = lstatSync(root)
  const mine = process.getuid === undefined || found.uid === process.getuid()
  if (!found.isDirectory() || !mine || (found.mode & 0o022) !== 0) {
    throw new Error(`${root} is not a folder of this user's that only it may write: remove it, or set TMPDIR to a private folder`)
  }
}
