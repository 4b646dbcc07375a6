import type { Language } from './language-codes.ts'

/**
 * "a, b or c" in `lang` (CLDR's disjunction list pattern, through `Intl.ListFormat`). CLDR has no list
 * patterns for Maltese (ICU answers in English there), so its "or" is given here.
 */
export function anyOf(lang: Language, items: readonly string[]): string {
  if (lang === 'mt') return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} jew ${items.at(-1)}`
  return new Intl.ListFormat(lang, { type: 'disjunction' }).format(items)
}
