/**
 * The buffer each threshold gets unless the operator or the client set one, by the interval rule: the
 * smallest whole number of years at which the UPPER end of the 95% Wilson interval of false accepts of the
 * five years under the threshold is at most 5% on the labelled dev set, per photo (docs/accuracy.md has
 * the figures, the command and the comparison of models). The point estimate alone chose 8/7/7 before, and
 * 21's did not hold on held-out faces (4.1% on the dev set, 8.3% held out). Measured at 18, 21 and 25;
 * thresholds between take the nearest measured one below, those under 16 a year more than 18's.
 */
export function defaultFaceBuffer(threshold: number): number {
  if (threshold >= 25) return 12
  if (threshold >= 21) return 9
  if (threshold >= 16) return 11
  return 12
}

/**
 * The buffer a check uses: the deployment's (FACE_AGE_BUFFER), else the measured default for the threshold,
 * or the client's own where it is larger. A client may only raise the buffer: a site that lowered it would
 * approve more minors under the service's name, and the token does not say how the age was checked.
 */
export function faceBufferFor(client: { faceBuffer?: number | null }, threshold: number, deploymentBuffer: number | undefined): number {
  const floor = deploymentBuffer ?? defaultFaceBuffer(threshold)
  return Math.max(client.faceBuffer ?? floor, floor)
}

/**
 * The least buffer a client may set: what a check would use without it (FACE_AGE_BUFFER, else the measured
 * default) for every threshold the client may ask for, from its minimum age (or 1 without one) to 99; with
 * the threshold that needs it, for the refusal's words. A buffer under it would be raised at that threshold
 * anyway (faceBufferFor), so the client would not get what it set.
 */
export function minimumClientFaceBuffer(minAge: number | null, deploymentBuffer: number | undefined): { years: number; threshold: number } {
  let least = { years: -1, threshold: minAge ?? 1 }
  for (let threshold = minAge ?? 1; threshold <= 99; threshold++) {
    const years = deploymentBuffer ?? defaultFaceBuffer(threshold)
    if (years > least.years) least = { years, threshold }
  }
  return least
}
