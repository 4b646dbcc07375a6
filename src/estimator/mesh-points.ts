/**
 * The points of the face mesh (MediaPipe's 468-point topology) that FaceObservation.mesh carries, in this
 * order: enough to fit a rigid head (points at many depths: the silhouette, eyes, brows, nose ridge and
 * tip, mouth and chin), far too few to draw a face.
 */
export const MESH_POINTS = [
  // silhouette, from the top of the forehead round the person's right side to the chin and back up their left
  10, 109, 67, 103, 54, 21, 162, 127, 234, 93, 132, 58, 172, 136, 150, 149, 176, 148, 152, 377, 400, 378, 379, 365, 397, 288, 361, 323, 454, 356, 389, 251, 284, 332, 297, 338,
  // eyes: right outer, inner, top, bottom; left outer, inner, top, bottom
  33, 133, 159, 145, 263, 362, 386, 374,
  // brows
  70, 105, 107, 300, 334, 336,
  // nose: ridge from between the eyes to the tip, the tip, under it, the wings
  168, 6, 197, 195, 5, 4, 1, 2, 98, 327,
  // mouth corners, lips, chin
  61, 291, 0, 17, 199, 175,
  // cheeks
  50, 280, 205, 425,
] as const

/** Where some named points sit in MESH_POINTS. */
export const MESH = Object.fromEntries(MESH_POINTS.map((index, position) => [index, position])) as Record<(typeof MESH_POINTS)[number], number>
