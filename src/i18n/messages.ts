import type { ErrorCode, ErrorHint } from '../errors.ts'
import type { CredentialFailure } from '../credentials/presentation.ts'
import type { PasskeyFailure } from '../passkeys/model.ts'
import type { FaceFailure } from '../liveness/face-policy.ts'

/** The face check's words: the page's script reads the short ones from a data attribute. */
export type FaceMessages = {
  title: string
  intro: string
  privacy: string
  startCamera: string
  preview: string
  capture: string
  upload: string
  starting: string
  ready: string
  checking: string
  cameraUnavailable: string
  /** No camera and no upload: the visitor needs another way. */
  cameraNeeded: (site: string) => string
  /** No camera, no upload, and the face check the site's only way: another device, or back to the site. */
  cameraNeededOnlyWay: (site: string) => string
  /** The margin, said before the camera starts: the threshold, and the estimate a face must reach. */
  margin: (site: string, age: number, approvedAge: number) => string
  /** Estimated over the threshold but under the cut-off: the check cannot place this face, and another try will not. */
  cannotPlace: (age: number, approvedAge: number) => string
  busy: string
  unreadable: string
  /** The live challenge's prompts, shown one after another while the frames are taken. */
  lookStraight: string
  turnLeft: string
  turnRight: string
  lookUp: string
  lookDown: string
  /** A "straight" prompt between turns: back to the camera, the capture is not over. */
  lookStraightNow: string
  lookStraightAgain: string
  tooDark: string
  /** A capture that answered no live challenge of this session (expired, used, or none asked for). */
  challengeExpired: string
  /** A still photo sent where only the live camera check is accepted. */
  cameraOnly: string
  failures: Record<FaceFailure, (age: number) => string>
}

/** The digital credential method's words: the page's script reads the short ones from a data attribute. */
export type CredentialMessages = {
  title: string
  intro: (age: number) => string
  privacy: string
  start: string
  scan: string
  /** Over the `openid4vp://` QR code: which apps it is for (HAIP wallets: EUDI wallets, driving licences). */
  idWalletTitle: string
  openWallet: string
  /** Over the `av://` QR code, and its image's name: the EU age verification app. */
  avAppTitle: string
  openAvApp: string
  useBrowserWallet: string
  waiting: string
  checking: string
  expired: string
  needsScript: string
  /** No answer from the wallet for this request yet. */
  noAnswer: string
  /** The browser's wallet picker closed without an answer (dismissed, or no wallet holds such an ID). */
  browserWalletCancelled: string
  /** The browser could not ask a wallet at all (no wallet for these protocols, or the request failed). */
  browserWalletFailed: string
  failures: Record<CredentialFailure, (age: number) => string>
}

export type { CredentialFailure }

/** Passkey re-verification's words: the page's script reads the short ones from a data attribute. */
export type PasskeyMessages = {
  useTitle: string
  useIntro: string
  use: string
  remove: string
  save: string
  saveIntro: string
  /** The name the visitor sees in their passkey manager. */
  credentialName: (age: number) => string
  working: string
  saved: string
  deleted: string
  /** The browser's dialog was closed or timed out (NotAllowedError). */
  cancelled: string
  /** Anything else the browser or the network refused. */
  failed: string
  failures: Record<PasskeyFailure, (age: number) => string>
}

/** Everything the visitor reads, per language. Functions take values that callers escape when rendering. */
export type Messages = {
  languageName: string
  pageTitle: string
  heading: string
  asks: (site: string, age: number) => string
  privacyTitle: string
  privacy: (site: string) => string
  chooseMethod: string
  noMethods: string
  noOtherMethods: string
  /** After a way closed for this session: the other ways this site takes, by name (`ways`: names of `wayNames`). */
  otherWays: (ways: string[]) => string
  wayNames: { credential: string; passkey: string }
  sandboxNotice: string
  testAge: string
  testMethod: string
  methodAgeOnly: string
  methodBiometric: string
  completeTest: string
  failedBelowAge: (age: number) => string
  invalidEvidence: string
  tryAgain: string
  attemptsLeft: (n: number) => string
  tooManyAttempts: (site: string) => string
  backToSite: (site: string) => string
  passTitle: string
  passCovers: (age: number) => string
  continueAsVerified: string
  forgetPass: string
  passForgotten: string
  errorTitle: string
  errorCode: string
  closeHint: string
  errors: Record<ErrorCode, string>
  /** A sentence for a case of a code, shown instead of the code's own (errors.ts `ErrorHint`). */
  errorHints: Record<ErrorHint, string>
  /** A site's own look (src/branding/): its logo's alt text, the link to its privacy policy. */
  brand: { logo: (site: string) => string; privacyPolicy: (site: string) => string }
  languageSwitch: string
  face: FaceMessages
  credential: CredentialMessages
  passkey: PasskeyMessages
}
