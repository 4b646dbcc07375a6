/**
 * face-api's age net (@vladmandic/face-api 1.7.15, model/age_gender_model*), run on Human's own tfjs: the
 * package's node build wants @tensorflow/tfjs, and its browser bundle does not start under Bun. The graph is
 * face-api's TinyXception(2) with its age head (src/xception/TinyXception.ts, src/ageGenderNet/AgeGenderNet.ts),
 * written out here layer for layer, on the weights as the package ships them.
 *
 * Its input, from the same source: the face padded to a square (centred) and resized to 112 × 112, RGB in
 * 0..255, less the means [122.782, 117.001, 104.298], divided by 255. The age is a regression output, in years.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Tensor, Tensor2D, Tensor4D } from '@tensorflow/tfjs-core'

type Tf = typeof import('@tensorflow/tfjs-core')
type Weights = Record<string, Tensor>

export const FACE_API_INPUT = 112
const MEAN_RGB = [122.782, 117.001, 104.298]

export async function loadFaceApiAge(tf: Tf, modelDir: string): Promise<Weights> {
  const manifest = JSON.parse(readFileSync(join(modelDir, 'age_gender_model-weights_manifest.json'), 'utf8')) as { paths: string[]; weights: never[] }[]
  const weights: Weights = {}
  for (const group of manifest) {
    const buffers = group.paths.map((path) => readFileSync(join(modelDir, path)))
    const joined = Buffer.concat(buffers)
    const decoded = tf.io.decodeWeights(joined.buffer.slice(joined.byteOffset, joined.byteOffset + joined.byteLength), group.weights)
    Object.assign(weights, decoded)
  }
  return weights
}

/** Ages for a batch of square crops, [n, 112, 112, 3] RGB in 0..1. */
export function runFaceApiAge(tf: Tf, w: Weights, crops: Tensor4D): Float32Array {
  const out = tf.tidy(() => {
    const conv = (x: Tensor4D, name: string, stride: number) => tf.add(tf.conv2d(x, w[`${name}/filters`] as never, stride, 'same'), w[`${name}/bias`]!) as Tensor4D
    const sep = (x: Tensor4D, name: string) =>
      tf.add(tf.separableConv2d(x, w[`${name}/depthwise_filter`] as never, w[`${name}/pointwise_filter`] as never, 1, 'same'), w[`${name}/bias`]!) as Tensor4D
    const reduction = (x: Tensor4D, name: string, activate: boolean) => {
      let y = activate ? tf.relu(x) : x
      y = sep(y, `${name}/separable_conv0`)
      y = sep(tf.relu(y), `${name}/separable_conv1`)
      y = tf.maxPool(y, 3, 2, 'same')
      return tf.add(y, conv(x, `${name}/expansion_conv`, 2)) as Tensor4D
    }
    const main = (x: Tensor4D, name: string) => {
      let y = sep(tf.relu(x), `${name}/separable_conv0`)
      y = sep(tf.relu(y), `${name}/separable_conv1`)
      y = sep(tf.relu(y), `${name}/separable_conv2`)
      return tf.add(y, x) as Tensor4D
    }
    const input = tf.div(tf.sub(tf.mul(crops, 255), tf.tensor1d(MEAN_RGB)), 255) as Tensor4D
    let x = tf.relu(conv(input, 'entry_flow/conv_in', 2))
    x = reduction(x, 'entry_flow/reduction_block_0', false)
    x = reduction(x, 'entry_flow/reduction_block_1', true)
    x = main(x, 'middle_flow/main_block_0')
    x = main(x, 'middle_flow/main_block_1')
    x = reduction(x, 'exit_flow/reduction_block', true)
    x = tf.relu(sep(x, 'exit_flow/separable_conv'))
    const pooled = tf.reshape(tf.avgPool(x, [7, 7], [2, 2], 'valid'), [crops.shape[0], -1]) as Tensor2D
    return tf.add(tf.matMul(pooled, w['fc/age/weights'] as Tensor2D), w['fc/age/bias']!)
  })
  try {
    return out.dataSync() as Float32Array
  } finally {
    out.dispose()
  }
}
