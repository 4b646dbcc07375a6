import { expect, test } from 'bun:test'
import type { DashboardMessages } from '../../src/i18n/dashboard-messages.ts'
import { dashboardLanguages, languages } from '../../src/i18n/languages.ts'
import type { Messages } from '../../src/i18n/messages.ts'
import { plural } from '../../src/i18n/plural.ts'

/**
 * What the compiler refuses (`bunx tsc --noEmit -p .` typechecks this file): each `@ts-expect-error` below
 * fails the typecheck the day the mistake it marks compiles.
 */
const { heading: _heading, ...withoutHeading } = languages.en
// @ts-expect-error a catalog missing a message
const incomplete: Messages = withoutHeading

// @ts-expect-error a message given the wrong kind of argument
const wrongArgument: Messages = { ...languages.en, asks: (site: string, age: string) => `${site} ${age}` }

// @ts-expect-error a nested message missing: the face check without its title
const nestedMissing: Messages = { ...languages.en, face: { ...languages.en.face, title: undefined } }

// @ts-expect-error a dashboard catalog with a function where a sentence belongs
const dashboardWrong: DashboardMessages = { ...dashboardLanguages.en, signIn: () => 'Sign in' }

// @ts-expect-error Polish without its `few` form (2, 3, 4, 22…)
const polishWithoutFew = (n: number) => plural('pl', n, { one: 'próba', many: 'prób', other: 'próby' })

test('the catalogs above are values only for the typecheck', () => {
  expect([incomplete, wrongArgument, nestedMissing, dashboardWrong, polishWithoutFew].length).toBe(5)
})
