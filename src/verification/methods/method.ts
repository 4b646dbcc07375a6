import type { TObject } from '@sinclair/typebox'
import type { MethodClass } from '../../db/schema.ts'
import type { Client } from '../../clients/model.ts'
import type { Messages } from '../../i18n/messages.ts'
import type { AnsweredChallenge } from '../face-challenge.ts'
import type { VerificationSession } from '../sessions.ts'

/** The outcome of one check. A failure says why, in the visitor's language. */
export type Verdict =
  | { approved: true; methodClass: MethodClass; provenAge: number; ageBuffer?: number }
  | {
      approved: false
      reason: (t: Messages) => string
      /** False for a problem with the submission itself (an unreadable picture): not a failed check. */
      countsAsAttempt?: boolean
      /** The method is not offered again in this session: another try would only fish for a lucky answer. */
      closesMethod?: boolean
    }

/** What a method's form needs from the page around it; `client` lets a form state the client's own settings. */
export type MethodView = {
  t: Messages
  action: string
  /** Where the method's script asks for a live challenge (the face check). */
  challengeAction: string
  csrfToken: string
  ageRequired: number
  siteName: string
  /** The site's home address (its registered home URL, else its redirect URI's origin): a form's way back. */
  siteHome: string
  /** This method is the page's only way to prove age (no other method, passkey or age pass): where it cannot work, the page is a dead end but for the way back. */
  onlyWay: boolean
  client: Client
}

/** What a method receives: the form's text fields (checked against `evidence`), its files, the request. */
export type MethodInput = {
  fields: Record<string, string>
  files: File[]
  ageRequired: number
  client: Client
  /** Uses up the session's live challenge (src/verification/face-challenge.ts): it and its age, or undefined. */
  consumeChallenge(id: string): Promise<AnsweredChallenge | undefined>
  /** The session the evidence was posted in, for methods whose evidence arrived by another way (a wallet). */
  session: VerificationSession
}

/**
 * A way to prove age, plugged into the hosted page: which clients may use it, the form it renders and
 * how that form is sent, the text fields it accepts (checked against `evidence` before `check` runs),
 * and the verdict.
 */
export type VerificationMethod = {
  id: string
  body: 'form' | 'multipart'
  availableFor(client: Client): boolean
  evidence: TObject
  render(view: MethodView): JSX.Element
  check(input: MethodInput): Promise<Verdict>
}
