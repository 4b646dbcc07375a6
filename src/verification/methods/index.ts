import type { Client } from '../../oauth/clients.ts'
import type { VerificationMethod } from './method.ts'
import { sandboxMethod } from './sandbox.tsx'

/** Every method the page knows, in the order it offers them. */
export const allMethods: VerificationMethod[] = [sandboxMethod]

export function methodsFor(client: Client): VerificationMethod[] {
  return allMethods.filter((method) => method.availableFor(client))
}
