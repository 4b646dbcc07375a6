import type { Language } from './language-codes.ts'

/**
 * The plural categories each language's messages distinguish, as CLDR's plural rules name them (the
 * categories `Intl.PluralRules` selects; test/i18n/plural.test.ts checks this table against it). Typed so
 * that a Polish message without its `few` form, or an Arabic one without `two`, fails to compile.
 *
 * French, Spanish, Italian and Portuguese have `many` for round millions ("1 000 000 de tentatives").
 */
export const pluralCategories = {
  ar: ['zero', 'one', 'two', 'few', 'many', 'other'],
  bg: ['one', 'other'],
  cs: ['one', 'few', 'many', 'other'],
  da: ['one', 'other'],
  de: ['one', 'other'],
  el: ['one', 'other'],
  en: ['one', 'other'],
  es: ['one', 'many', 'other'],
  et: ['one', 'other'],
  fi: ['one', 'other'],
  fr: ['one', 'many', 'other'],
  ga: ['one', 'two', 'few', 'many', 'other'],
  hr: ['one', 'few', 'other'],
  hu: ['one', 'other'],
  it: ['one', 'many', 'other'],
  lt: ['one', 'few', 'many', 'other'],
  lv: ['zero', 'one', 'other'],
  mt: ['one', 'two', 'few', 'many', 'other'],
  nl: ['one', 'other'],
  pl: ['one', 'few', 'many', 'other'],
  pt: ['one', 'many', 'other'],
  ro: ['one', 'few', 'other'],
  sk: ['one', 'few', 'many', 'other'],
  sl: ['one', 'two', 'few', 'other'],
  sv: ['one', 'other'],
  tr: ['one', 'other'],
  uk: ['one', 'few', 'many', 'other'],
} as const satisfies Record<Language, readonly Intl.LDMLPluralRule[]>

/** One text per plural category of `lang`, every one of them required. */
export type PluralForms<L extends Language> = Record<(typeof pluralCategories)[L][number], string>

const rules = new Map<string, Intl.PluralRules>()

/**
 * The form of `forms` that `lang`'s plural rules choose for `n` (CLDR, through `Intl.PluralRules`): Polish
 * says "1 próba", "2 próby", "5 prób", "22 próby", "25 prób"; `n === 1 ? … : …` gets three of those wrong.
 */
export function plural<L extends Language>(lang: L, n: number, forms: PluralForms<L>): string {
  let rule = rules.get(lang)
  if (!rule) rules.set(lang, (rule = new Intl.PluralRules(lang)))
  const category = rule.select(n) as keyof PluralForms<L>
  // A newer CLDR may add a category to a language; until the table above has it, the `other` form stands in.
  return forms[category] ?? (forms as Record<string, string>).other!
}

