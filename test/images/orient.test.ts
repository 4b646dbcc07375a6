import { describe, expect, test } from 'bun:test'
import { orient } from '../../src/images/orient.ts'
import { STORED_UNDER } from './exif-orientations.ts'

describe('orient', () => {
  test('turns each EXIF orientation back upright', () => {
    // Upright 3x2 image whose red channel numbers the pixels 0..5, row by row.
    const upright = [0, 1, 2, 3, 4, 5]
    const rgba = (values: number[]) => new Uint8Array(values.flatMap((v) => [v, 0, 0, 255]))
    const red = (image: { data: Uint8Array }) => Array.from(image.data.filter((_, i) => i % 4 === 0))
    for (const [orientation, [width, height, values]] of Object.entries(STORED_UNDER)) {
      const result = orient({ width, height, data: rgba(values) }, Number(orientation))
      expect([result.width, result.height, red(result)]).toEqual([3, 2, upright])
    }
  })
})
