import { Type } from '@sinclair/typebox'
import { ImageDecodeError, type AgeEstimator, type AgeViews, type FrameAnalysis } from '../../estimator/types.ts'
import type { Clock } from '../../lib/clock.ts'
import { sha256Hex } from '../../lib/crypto.ts'
import { challengeDuration } from '../../liveness/challenge.ts'
import { createReplayGuard } from '../../liveness/replay.ts'
import { decideFaceCheck, decideLiveFaceCheck, DEFAULT_FACE_POLICY } from '../../liveness/face-policy.ts'
import { faceBufferFor } from '../../clients/face-buffer.ts'
import { ScriptOutcome } from './script-outcome.tsx'
import type { Verdict, VerificationMethod } from './method.ts'

/** The page's script sends two frames per phase (12 for four prompts and the two "look straight"); a file picker one. */
export const MAX_FRAMES = 14
/**
 * A capture may arrive this much sooner than the prompts' holds add up to (the page's timers and the
 * camera's frame times are not exact); sooner still, it was not taken while the prompts were shown.
 */
export const ANSWER_ALLOWANCE_MS = 500
export const MAX_FRAME_BYTES = 6 * 1024 * 1024

/**
 * The view the age model reads of frame `i` of a live capture. The two frames under each "look straight"
 * prompt alternate between the face and its mirror image, so that the median over the frontal frames fuses
 * both views as a still photo's two passes do, at one pass a frame; frames under a turn prompt serve the
 * identity check only, which compares original views.
 */
function liveView(phases: number[], i: number, prompts: number): AgeViews {
  const phase = phases[i]!
  if (phase !== 0 && phase !== prompts + 1) return 'original'
  const indexInPhase = phases.slice(0, i).filter((earlier) => earlier === phase).length
  return indexInPhase % 2 === 0 ? 'original' : 'mirror'
}

const unreadable: Verdict = { approved: false, reason: (t) => t.face.unreadable, countsAsAttempt: false }

/**
 * The prompt each frame was taken under ("0,0,1,1,2,2,3,3,4,4"): whole numbers from 0 to prompts + 1,
 * one per frame, never going back. Anything else is not a capture our page made.
 */
function readPhases(value: string | undefined, frames: number, prompts: number): number[] | undefined {
  const phases = (value ?? '').split(',').map(Number)
  const valid = phases.length === frames && phases.every((phase, i) => Number.isInteger(phase) && phase >= 0 && phase <= prompts + 1 && (i === 0 || phase >= phases[i - 1]!))
  return valid ? phases : undefined
}

/**
 * Facial age estimation (method class `biometric`), for production clients. Frames arrive in the form
 * post, are analysed on this server by the estimator and dropped when the request ends: only the
 * estimator's numbers reach the decision, and only the verdict, the threshold and the buffer are kept.
 */
export function createFaceMethod(options: {
  estimator: AgeEstimator
  /** FACE_AGE_BUFFER, when the operator set one; otherwise each threshold's measured default. */
  defaultBuffer: number | undefined
  /** FACE_UPLOAD: offer a file picker besides the camera (a still photo meets no live challenge). */
  upload: boolean
  /** When a capture was judged: how long the replay guard remembers it. */
  clock: Clock
}): VerificationMethod {
  // As long as a session lives: the faces of any capture judged here are refused if shown again.
  const replays = createReplayGuard({ ttlMs: 30 * 60_000, maxEntries: 100_000 })
  return {
    id: 'face',
    body: 'multipart',
    availableFor: (client) => !client.sandbox,
    evidence: Type.Object({
      challenge: Type.Optional(Type.String({ maxLength: 64 })),
      phases: Type.Optional(Type.String({ maxLength: 64, pattern: '^[0-9]+(,[0-9]+)*$' })),
    }),
    render: ({ t, action, challengeAction, csrfToken, ageRequired, siteName, siteHome, onlyWay, client }) => {
      const messages = {
        starting: t.face.starting,
        ready: t.face.ready,
        checking: t.face.checking,
        unavailable: t.face.cameraUnavailable,
        lookStraight: t.face.lookStraight,
        left: t.face.turnLeft,
        right: t.face.turnRight,
        up: t.face.lookUp,
        down: t.face.lookDown,
        straight: t.face.lookStraightNow,
        lookStraightAgain: t.face.lookStraightAgain,
        tooDark: t.face.tooDark,
        busy: t.face.busy,
      }
      // Said before the camera starts, so a visitor who looks 21 is not surprised by a "no" at 18.
      const approvedAge = ageRequired + faceBufferFor(client, ageRequired, options.defaultBuffer)
      // No camera (none on the device, none shared, no script): what to do instead, and the way back, so
      // that a page whose only way is this one is never a dead end (issue 32).
      const noCamera = (
        <>
          <p safe>{onlyWay ? t.face.cameraNeededOnlyWay(siteName) : t.face.cameraNeeded(siteName)}</p>
          <p>
            <a href={siteHome} class="back" safe>
              {t.backToSite(siteName)}
            </a>
          </p>
        </>
      )
      return (
        <form method="post" action={action} enctype="multipart/form-data" class="method face" data-face-form data-challenge={challengeAction} data-messages={JSON.stringify(messages)}>
          <h3 safe>{t.face.title}</h3>
          <p safe>{t.face.intro}</p>
          <p safe>{t.face.margin(siteName, ageRequired, approvedAge)}</p>
          <p class="small" safe>
            {t.face.privacy}
          </p>
          <input type="hidden" name="csrf" value={csrfToken} />
          <div class="camera" data-camera hidden>
            <video data-preview autoplay muted playsinline aria-label={t.face.preview}></video>
            <div class="guide" aria-hidden="true"></div>
            <p class="prompt" data-prompt aria-live="assertive"></p>
          </div>
          <ScriptOutcome />
          {!options.upload && (
            <>
              <div class="alert" data-no-camera hidden>
                {noCamera}
              </div>
              <noscript>{noCamera}</noscript>
            </>
          )}
          {options.upload && (
            <div class="upload" data-upload>
              <label for="face-photo" safe>
                {t.face.upload}
              </label>
              <input id="face-photo" name="frame" type="file" accept="image/jpeg,image/png" capture="user" required />
            </div>
          )}
          <button type="button" data-start hidden safe>
            {t.face.startCamera}
          </button>
          <button type="submit" data-submit hidden={!options.upload} safe>
            {t.face.capture}
          </button>
          <script src="/assets/face-capture.js" defer></script>
        </form>
      )
    },
    async check({ fields, files, ageRequired, client, consumeChallenge }) {
      const frames = files.filter((file) => file.size > 0)
      if (frames.length === 0 || frames.length > MAX_FRAMES || frames.some((frame) => frame.size > MAX_FRAME_BYTES)) {
        return unreadable
      }
      // A live capture answers the session's challenge; without one, only a still upload the operator allowed.
      const answered = fields.challenge ? await consumeChallenge(fields.challenge) : undefined
      if (fields.challenge && !answered) return { approved: false, reason: (t) => t.face.challengeExpired, countsAsAttempt: false }
      if (!answered && !options.upload) return { approved: false, reason: (t) => t.face.cameraOnly, countsAsAttempt: false }
      const challenge = answered?.challenge
      const phases = challenge ? readPhases(fields.phases, frames.length, challenge.poses.length) : []
      if (!phases) return unreadable
      // Frames taken faster than the prompts were shown were not taken while they were shown: a recording
      // played as fast as it can be sent. The challenge is used up and the attempt counts.
      if (answered && answered.elapsedMs < challengeDuration(answered.challenge) - ANSWER_ALLOWANCE_MS) {
        return { approved: false, reason: (t) => t.face.failures.wrong_turn(ageRequired) }
      }

      const images = await Promise.all(frames.map(async (frame) => new Uint8Array(await frame.arrayBuffer())))
      const digests = images.map((image) => sha256Hex(image))
      const analyses: FrameAnalysis[] = []
      for (const [i, image] of images.entries()) {
        try {
          analyses.push(await options.estimator.analyze(image, challenge ? liveView(phases, i, challenge.poses.length) : 'both'))
        } catch (cause) {
          // EstimatorBusyError goes up to the route, which answers "busy, retry".
          if (cause instanceof ImageDecodeError || (cause as Error).name === 'ImageDecodeError') return unreadable
          throw cause
        }
      }
      const buffer = faceBufferFor(client, ageRequired, options.defaultBuffer)
      const policy = { ...DEFAULT_FACE_POLICY, buffer }
      // Checked after the analysis, so that a replay costs the sender as much as a real capture.
      const replayed = replays.replayed(digests, analyses, options.clock.now().getTime())
      const decision = replayed
        ? ({ approved: false, failure: 'repeated_frames' } as const)
        : challenge
          ? decideLiveFaceCheck(
              analyses.map((analysis, i) => ({ analysis, phase: phases[i]!, digest: digests[i]! })),
              challenge,
              ageRequired,
              policy,
            )
          : decideFaceCheck(analyses, ageRequired, policy)
      // A re-verification relies on what was asked and confirmed, never on a number read off a face.
      if (decision.approved) return { approved: true, methodClass: 'biometric', provenAge: ageRequired, ageBuffer: buffer }
      const failure = decision.failure
      // Estimated over the threshold but under the cut-off (most young adults): the check cannot place this
      // face, and says so rather than leave them to wonder whether another try would do.
      if (failure === 'not_over_threshold' && decision.medianAge !== undefined && decision.medianAge >= ageRequired) {
        return { approved: false, reason: (t) => t.face.cannotPlace(ageRequired, ageRequired + buffer), closesMethod: true }
      }
      return { approved: false, reason: (t) => t.face.failures[failure](ageRequired), closesMethod: failure === 'not_over_threshold' }
    },
  }
}
