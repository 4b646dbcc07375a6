import type { TObject } from '@sinclair/typebox'
import type { MethodClass } from '../../db/schema.ts'
import type { Client } from '../../oauth/clients.ts'
import type { Messages } from '../../pages/i18n.ts'

/** The outcome of one check. A failure says why, in the visitor's language. */
export type Verdict =
  | { approved: true; methodClass: MethodClass; provenAge: number }
  | { approved: false; reason: (t: Messages) => string }

/** What a method's form needs from the page around it. */
export type MethodView = { t: Messages; action: string; csrfToken: string; ageRequired: number }

/**
 * A way to prove age, plugged into the hosted page: which clients may use it, the form it renders,
 * the evidence it accepts (checked against `evidence` before `check` runs) and the verdict.
 */
export type VerificationMethod = {
  id: string
  availableFor(client: Client): boolean
  evidence: TObject
  render(view: MethodView): JSX.Element
  check(evidence: Record<string, string>, context: { ageRequired: number }): Promise<Verdict>
}
