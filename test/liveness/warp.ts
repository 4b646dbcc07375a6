import jpeg from 'jpeg-js'

/**
 * The cheapest attack on a head-turn check, as ~20 lines of canvas would do it: one frontal photo, and
 * under each turn prompt the region around the nose slid sideways (or up and down) by a smooth local
 * warp, so that the nose moves across the eye line while the rest of the face stays put. `shift` is the
 * nose's displacement in pixels ([dx, dy]); `radius` how far the warp reaches (a Gaussian's sigma).
 * Decoded RGB in, JPEG out, as the page's canvas would send it.
 */
export function warpNose(photo: Uint8Array, centre: [number, number], shift: [number, number], radius: number, quality = 90): Uint8Array {
  const source = jpeg.decode(photo, { useTArray: true })
  const { width, height, data } = source
  const out = new Uint8Array(data.length)
  const spread = 2 * radius * radius
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // Backward map: each output pixel reads from where the warp came from.
      const weight = Math.exp(-((x - centre[0] - shift[0]) ** 2 + (y - centre[1] - shift[1]) ** 2) / spread)
      const sx = x - shift[0] * weight
      const sy = y - shift[1] * weight
      const x0 = Math.max(0, Math.min(width - 2, Math.floor(sx)))
      const y0 = Math.max(0, Math.min(height - 2, Math.floor(sy)))
      const fx = Math.max(0, Math.min(1, sx - x0))
      const fy = Math.max(0, Math.min(1, sy - y0))
      for (let c = 0; c < 4; c++) {
        const at = (xx: number, yy: number) => data[(yy * width + xx) * 4 + c]!
        const top = at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx
        const bottom = at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx
        out[(y * width + x) * 4 + c] = Math.round(top * (1 - fy) + bottom * fy)
      }
    }
  }
  return jpeg.encode({ width, height, data: out }, quality).data
}

/**
 * What a replay of recorded frames does to dodge a byte-for-byte guard: decode, change the picture a
 * little, encode again. `scale` resizes about the centre (1.01 is 1% larger, cropped back to the frame),
 * `shift` moves it by whole pixels, `noise` flips that share of pixels to random grey levels (seeded, so a
 * test is repeatable), `quality` is the new JPEG quality.
 */
export function retouch(frame: Uint8Array, options: { quality?: number; scale?: number; shift?: [number, number]; noise?: number; seed?: number } = {}): Uint8Array {
  const { width, height, data } = jpeg.decode(frame, { useTArray: true })
  const scale = options.scale ?? 1
  const [dx, dy] = options.shift ?? [0, 0]
  const out = new Uint8Array(data.length)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const sx = Math.max(0, Math.min(width - 1.001, (x - dx - width / 2) / scale + width / 2))
      const sy = Math.max(0, Math.min(height - 1.001, (y - dy - height / 2) / scale + height / 2))
      const x0 = Math.floor(sx)
      const y0 = Math.floor(sy)
      const fx = sx - x0
      const fy = sy - y0
      for (let c = 0; c < 4; c++) {
        const at = (xx: number, yy: number) => data[(yy * width + xx) * 4 + c]!
        const top = at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx
        const bottom = at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx
        out[(y * width + x) * 4 + c] = Math.round(top * (1 - fy) + bottom * fy)
      }
    }
  }
  let seed = options.seed ?? 1
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % 65536) / 65536
  const noisy = Math.round((options.noise ?? 0) * width * height)
  for (let k = 0; k < noisy; k++) {
    const at = Math.floor(random() * width * height) * 4
    out.fill(Math.floor(random() * 256), at, at + 3)
  }
  return jpeg.encode({ width, height, data: out }, options.quality ?? 90).data
}
