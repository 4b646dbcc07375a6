import { Type } from '@sinclair/typebox'
import { methodClasses, type MethodClass } from '../../db/schema.ts'
import type { VerificationMethod } from './method.ts'

/**
 * The sandbox's test form (DESIGN.md "Sandbox clients"): the visitor states an age and a method class,
 * and is approved when the age meets the threshold. Offered to sandbox clients only.
 */
export const sandboxMethod: VerificationMethod = {
  id: 'sandbox',
  body: 'form',
  availableFor: (client) => client.sandbox,
  evidence: Type.Object({
    age: Type.String({ pattern: '^\\d{1,3}$' }),
    method_class: Type.Union(methodClasses.map((m) => Type.Literal(m))),
  }),
  render: ({ t, action, csrfToken, ageRequired }) => (
    <form method="post" action={action} class="method">
      <p class="notice" safe>
        {t.sandboxNotice}
      </p>
      <input type="hidden" name="csrf" value={csrfToken} />
      <label for="test-age" safe>
        {t.testAge}
      </label>
      <input id="test-age" name="age" type="number" inputmode="numeric" min="0" max="150" value={String(ageRequired)} required />
      <label for="test-method" safe>
        {t.testMethod}
      </label>
      <select id="test-method" name="method_class">
        <option value="age_only" safe>
          {t.methodAgeOnly}
        </option>
        <option value="biometric" safe>
          {t.methodBiometric}
        </option>
      </select>
      <button type="submit" safe>
        {t.completeTest}
      </button>
    </form>
  ),
  async check({ fields, ageRequired }) {
    const age = Number(fields.age)
    if (age < ageRequired) return { approved: false, reason: (t) => t.failedBelowAge(ageRequired) }
    return { approved: true, methodClass: fields.method_class as MethodClass, provenAge: age }
  },
}
