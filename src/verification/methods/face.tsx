import { Type } from '@sinclair/typebox'
import { ImageDecodeError, type AgeEstimator, type FrameAnalysis } from '../../estimator/types.ts'
import { decideFaceCheck, DEFAULT_FACE_POLICY } from './face-policy.ts'
import type { VerificationMethod } from './method.ts'

/** The page's script sends three frames; a phone's file picker sends one. More is refused. */
export const MAX_FRAMES = 5
export const MAX_FRAME_BYTES = 6 * 1024 * 1024

/**
 * Facial age estimation (method class `biometric`), for production clients. Frames arrive in the form
 * post, are analysed on this server by the estimator and dropped when the request ends: only the
 * estimator's numbers reach the decision, and only the verdict, the threshold and the buffer are kept.
 */
export function createFaceMethod(options: {
  estimator: AgeEstimator
  defaultBuffer: number
  /** FACE_UPLOAD: offer a file picker besides the camera (a still photo meets no live challenge). */
  upload: boolean
}): VerificationMethod {
  return {
    id: 'face',
    body: 'multipart',
    availableFor: (client) => !client.sandbox,
    evidence: Type.Object({}),
    render: ({ t, action, csrfToken, ageRequired, siteName, client }) => {
      const messages = {
        starting: t.face.starting,
        ready: t.face.ready,
        checking: t.face.checking,
        unavailable: t.face.cameraUnavailable,
        cameraNeeded: t.face.cameraNeeded(siteName),
      }
      // Said before the camera starts, so a visitor who looks 21 is not surprised by a "no" at 18.
      const approvedAge = ageRequired + (client.faceBuffer ?? options.defaultBuffer)
      return (
        <form method="post" action={action} enctype="multipart/form-data" class="method face" data-face-form data-messages={JSON.stringify(messages)}>
          <h3 safe>{t.face.title}</h3>
          <p safe>{t.face.intro}</p>
          <p safe>{t.face.margin(siteName, ageRequired, approvedAge)}</p>
          <p class="small" safe>
            {t.face.privacy}
          </p>
          <input type="hidden" name="csrf" value={csrfToken} />
          <div class="camera" data-camera hidden>
            <video data-preview autoplay muted playsinline aria-label={t.face.preview}></video>
          </div>
          <p class="status" role="status" aria-live="polite" data-status></p>
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
          <button type="submit" data-submit safe>
            {t.face.capture}
          </button>
          <script src="/assets/face-capture.js" defer></script>
        </form>
      )
    },
    async check({ files, ageRequired, client }) {
      const frames = files.filter((file) => file.size > 0)
      if (frames.length === 0 || frames.length > MAX_FRAMES || frames.some((frame) => frame.size > MAX_FRAME_BYTES)) {
        return { approved: false, reason: (t) => t.face.unreadable, countsAsAttempt: false }
      }
      const analyses: FrameAnalysis[] = []
      for (const frame of frames) {
        try {
          analyses.push(await options.estimator.analyze(new Uint8Array(await frame.arrayBuffer())))
        } catch (cause) {
          // EstimatorBusyError goes up to the route, which answers "busy, retry".
          if (cause instanceof ImageDecodeError || (cause as Error).name === 'ImageDecodeError') {
            return { approved: false, reason: (t) => t.face.unreadable, countsAsAttempt: false }
          }
          throw cause
        }
      }
      const buffer = client.faceBuffer ?? options.defaultBuffer
      const decision = decideFaceCheck(analyses, ageRequired, { ...DEFAULT_FACE_POLICY, buffer })
      if (decision.approved) return { approved: true, methodClass: 'biometric', provenAge: decision.provenAge, ageBuffer: buffer }
      return { approved: false, reason: (t) => t.face.failures[decision.failure](ageRequired) }
    },
  }
}
