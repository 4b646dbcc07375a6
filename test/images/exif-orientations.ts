/**
 * How a camera stores an upright 3 × 2 picture, whose cells are numbered 0..5 row by row, under each EXIF
 * orientation (1..8, the TIFF definition): cells across, cells down, and the cell numbers in stored order.
 */
export const STORED_UNDER: Record<number, [across: number, down: number, cells: number[]]> = {
  1: [3, 2, [0, 1, 2, 3, 4, 5]],
  2: [3, 2, [2, 1, 0, 5, 4, 3]],
  3: [3, 2, [5, 4, 3, 2, 1, 0]],
  4: [3, 2, [3, 4, 5, 0, 1, 2]],
  5: [2, 3, [0, 3, 1, 4, 2, 5]],
  6: [2, 3, [2, 5, 1, 4, 0, 3]],
  7: [2, 3, [5, 2, 4, 1, 3, 0]],
  8: [2, 3, [3, 0, 4, 1, 5, 2]],
}
