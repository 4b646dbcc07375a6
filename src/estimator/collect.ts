const FULL_COLLECTION_EVERY = 4
let framesSinceFullCollection = 0

/**
 * The garbage collection an estimator worker runs after each frame. Each frame leaves megabytes of garbage
 * (the decoded frame, tensor read-backs) that Bun collects lazily, least of all while the worker is kept
 * busy: a worker's RSS then climbed past 1 GiB. A young-generation collection after each frame (0.2 ms) and
 * a full one after every fourth keep its peak within about 20 MiB of a full collection after every frame,
 * which cost 15 ms, a tenth of the frame's analysis (960 px frames on one core: 15.6 against 4.0 ms a
 * frame, peaks of 213 and 235 MiB; bench/face-stages.ts counts it as a stage).
 */
export function collectAfterFrame(): void {
  if (++framesSinceFullCollection >= FULL_COLLECTION_EVERY) {
    Bun.gc(true)
    framesSinceFullCollection = 0
  } else {
    Bun.gc(false)
  }
}
