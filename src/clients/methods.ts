import { clientMethods, type ClientMethod, type MethodClass } from '../db/schema.ts'
import { RuleError } from '../errors.ts'

export { clientMethods, type ClientMethod }

/**
 * The way of the first check an age pass or a passkey stands for. A re-verification is only as strong as
 * that check, so it counts for a client only when the client accepts that way itself.
 */
const methodOfClass: Record<MethodClass, ClientMethod> = { biometric: 'face', age_only: 'credential' }

/** Whether a client accepts a way: a method of the page (`face`, `credential`) or a re-verification. */
export function acceptsMethod(client: { methods: readonly string[] }, method: string): boolean {
  return client.methods.includes(method)
}

/**
 * Whether a re-verification (`age_pass`, `passkey`) of a check made by `methodClass` counts for a client:
 * the client accepts both the re-verification and the way the original check was made.
 */
export function acceptsReverification(client: { methods: readonly string[] }, kind: 'age_pass' | 'passkey', methodClass: MethodClass): boolean {
  return acceptsMethod(client, kind) && acceptsMethod(client, methodOfClass[methodClass])
}

/** Reads `face,credential` (the CLI's --methods): known names, at least one, each once, in the canonical order. */
export function readClientMethods(value: string | readonly string[]): ClientMethod[] {
  const names = (typeof value === 'string' ? value.split(',') : value).map((name) => name.trim()).filter((name) => name !== '')
  const unknown = names.filter((name) => !(clientMethods as readonly string[]).includes(name))
  if (unknown.length > 0) throw new RuleError('methods_invalid', `methods must be among ${clientMethods.join(', ')}; unknown: ${unknown.join(', ')}`)
  if (names.length === 0) throw new RuleError('methods_invalid', `methods must name at least one of ${clientMethods.join(', ')}`)
  return clientMethods.filter((method) => names.includes(method))
}
