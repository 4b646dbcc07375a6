/** 8-bit RGBA pixels, row-major, 4 bytes a pixel. */
export type Rgba = { width: number; height: number; data: Uint8Array }

/** Applies an EXIF orientation (1..8) so that the returned frame is upright. */
export function orient(image: Rgba, orientation: number): Rgba {
  if (orientation <= 1 || orientation > 8) return image
  const { width: w, height: h, data } = image
  const swap = orientation >= 5
  const ow = swap ? h : w
  const oh = swap ? w : h
  const out = new Uint8Array(ow * oh * 4)
  for (let y = 0; y < oh; y++) {
    for (let x = 0; x < ow; x++) {
      // Source pixel for output (x, y), per the EXIF definition of each orientation.
      let sx: number
      let sy: number
      switch (orientation) {
        case 2: sx = w - 1 - x; sy = y; break
        case 3: sx = w - 1 - x; sy = h - 1 - y; break
        case 4: sx = x; sy = h - 1 - y; break
        case 5: sx = y; sy = x; break
        case 6: sx = y; sy = h - 1 - x; break
        case 7: sx = w - 1 - y; sy = h - 1 - x; break
        default: sx = w - 1 - y; sy = x; break
      }
      const s = (sy * w + sx) * 4
      const d = (y * ow + x) * 4
      out[d] = data[s]!
      out[d + 1] = data[s + 1]!
      out[d + 2] = data[s + 2]!
    }
  }
  return { width: ow, height: oh, data: out }
}
