import type { AppDeps } from '../../deps.ts'
import { acceptsMethod } from '../../clients/methods.ts'
import type { Client } from '../../clients/model.ts'
import { createCredentialMethod } from './credential.tsx'
import { createFaceMethod } from './face.tsx'
import type { VerificationMethod } from './method.ts'
import { sandboxMethod } from './sandbox.tsx'

/**
 * Every method this deployment offers, in page order. A digital credential needs a trust list; the face
 * check a running estimator. The credential comes first: it proves the age itself, the face only estimates it.
 */
export function createMethods(deps: Pick<AppDeps, 'config' | 'estimator' | 'credentials' | 'db' | 'clock'>): VerificationMethod[] {
  return [
    sandboxMethod,
    ...(deps.credentials ? [createCredentialMethod(deps)] : []),
    ...(deps.estimator ? [createFaceMethod({ estimator: deps.estimator, defaultBuffer: deps.config.face.buffer, upload: deps.config.face.upload, clock: deps.clock })] : []),
  ]
}

/**
 * The methods a client's page offers: those that serve its kind (sandbox or live) and that it accepts
 * (`clients update --methods`). The sandbox's simulated check is the only way of a sandbox client's page.
 */
export function methodsFor(methods: VerificationMethod[], client: Client): VerificationMethod[] {
  return methods.filter((method) => method.availableFor(client) && (method.id === sandboxMethod.id || acceptsMethod(client, method.id)))
}
