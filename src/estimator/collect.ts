const FULL_COLLECTION_EVERY = 8
let framesSinceFullCollection = 0

/**
 * The garbage collection an estimator worker runs after each frame. Each frame leaves megabytes of garbage
 * (the decoded frame, tensor read-backs) that Bun collects lazily, least of all while the worker is kept
 * busy: a worker's RSS then climbed past 1 GiB. A young-generation collection after each frame (0.2 ms) and
 * a full one after every fourth kept its peak within about 20 MiB of a full collection after every frame,
 * which cost 15 ms, a tenth of the frame's analysis (960 px frames on one core: 15.6 against 4.0 ms a
 * frame, peaks of 213 and 235 MiB; bench/face-stages.ts counts it as a stage). With the models in
 * onnxruntime and the PNG's rows unpacked into one kept buffer (src/images/png-pixels.ts) a frame leaves
 * less, and a full collection after every eighth frame gave the same peaks as every fourth (`taskset -c 1
 * bun bench/face-estimator.ts --workers 1 --views original --passes 3`, twice each: 358 and 349 against 351
 * and 349 MiB) for 2 ms less a frame, and decoding faster too, since fewer freed pages come back faulted
 * (bench/face-stages.ts --side 960: 57.7 and 58.9 against 65.0 and 67.7 ms a frame).
 */
export function collectAfterFrame(): void {
  if (++framesSinceFullCollection >= FULL_COLLECTION_EVERY) {
    Bun.gc(true)
    framesSinceFullCollection = 0
  } else {
    Bun.gc(false)
  }
}
