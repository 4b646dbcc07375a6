import type { AppDeps } from '../../deps.ts'
import type { Client } from '../../oauth/clients.ts'
import { createFaceMethod } from './face.tsx'
import type { VerificationMethod } from './method.ts'
import { sandboxMethod } from './sandbox.tsx'

/** Every method this deployment offers, in page order. The face check needs a running estimator. */
export function createMethods(deps: Pick<AppDeps, 'config' | 'estimator'>): VerificationMethod[] {
  return [
    sandboxMethod,
    ...(deps.estimator ? [createFaceMethod({ estimator: deps.estimator, defaultBuffer: deps.config.face.buffer, upload: deps.config.face.upload })] : []),
  ]
}

export function methodsFor(methods: VerificationMethod[], client: Client): VerificationMethod[] {
  return methods.filter((method) => method.availableFor(client))
}
