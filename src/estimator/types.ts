/**
 * What the face age estimator reports about one still frame. Only numbers leave the estimator: no
 * pixels, no tensors, no face crops. The decision policy (src/verification/methods/face-policy.ts) turns
 * these into a verdict.
 */
export type FaceObservation = {
  /** Estimated age in years. */
  age: number
  /** Detector confidence, 0..1. */
  faceScore: number
  /** The face's bounding box in pixels of the analysed frame. */
  box: { x: number; y: number; width: number; height: number }
  /** Sharpness of the face region: variance of the Laplacian of its grey levels (higher is sharper). */
  sharpness: number
  /**
   * Five points of the face mesh, in pixels of the analysed frame: the outer eye corners, the nose tip
   * and the mouth corners ("right" is the person's right, on the left of an unmirrored camera frame).
   * The liveness check reads the head's turn from them; they are not enough to draw a face.
   */
  landmarks?: Landmarks
  /**
   * A few dozen points of the face mesh WITH depth ([x, y, z] in pixels of the analysed frame; z grows away
   * from the camera), in the order of MESH_POINTS (src/estimator/mesh-points.ts). The liveness check fits a
   * rigid head to them. Like the descriptor, a biometric template: kept in memory for one request, never
   * stored or logged.
   */
  mesh?: MeshPoint[]
  /** Head pose from the mesh, in degrees, when the mesh ran. */
  pose?: { yaw: number; pitch: number; roll: number }
  /**
   * The age model's pooled features, unit length: two frames of one person are close (cosine), of two
   * people far. A biometric template: kept in memory for one request, never stored or logged.
   */
  descriptor?: number[]
}

export type Point = [number, number]
export type MeshPoint = [number, number, number]
export type Landmarks = { rightEye: Point; leftEye: Point; nose: Point; mouthRight: Point; mouthLeft: Point }

export type FrameAnalysis = {
  width: number
  height: number
  faces: FaceObservation[]
  /** Milliseconds the analysis took inside the estimator. */
  ms: number
}

/**
 * Which view of each face the age model reads: the face and its mirror image averaged (a still photo,
 * the evaluation), or one of them (a frame of a live capture, whose frames alternate views, so that the
 * capture's median fuses both at half the cost per frame).
 */
export type AgeViews = 'both' | 'original' | 'mirror'

/**
 * What runs the face models (the detector, the mesh and the age model): onnxruntime, or tfjs' WASM backend
 * where onnxruntime could not load (`reason`).
 */
export type ModelRuntime = { name: 'onnxruntime' } | { name: 'tfjs-wasm'; reason: string }

/** The estimator service: loads its models once, analyses frames off the request thread, bounded. */
export interface AgeEstimator {
  /** Resolves when the models are loaded and a warm-up frame has run; rejects if they cannot load. */
  readonly ready: Promise<void>
  /** Once ready: what runs the face models (src/estimator/age-model.ts, src/estimator/human-models.ts). */
  readonly modelRuntime?: ModelRuntime
  /** Analyses one encoded image (JPEG or PNG bytes). Throws EstimatorBusyError when the queue is full. */
  analyze(image: Uint8Array, views?: AgeViews): Promise<FrameAnalysis>
  close(): Promise<void>
}

/** Every worker is busy and the queue is full: the caller answers "busy, retry" instead of queueing more. */
export class EstimatorBusyError extends Error {
  constructor() {
    super('The age estimator is busy')
    this.name = 'EstimatorBusyError'
  }
}

/** The image could not be decoded (not a JPEG or PNG, or too large). */
export class ImageDecodeError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ImageDecodeError'
  }
}
