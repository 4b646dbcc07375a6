import { describe, expect, test } from 'bun:test'
import { languageCodes } from '../../src/i18n/language-codes.ts'
import { languages } from '../../src/i18n/languages.ts'
import { anyOf } from '../../src/i18n/lists.ts'
import { plural, pluralCategories } from '../../src/i18n/plural.ts'

describe('plural rules', () => {
  test.each(languageCodes)('%s: the forms a message must give are the categories of CLDR’s rules (Intl.PluralRules)', (code) => {
    const categories = new Intl.PluralRules(code).resolvedOptions().pluralCategories
    expect([...pluralCategories[code]].sort()).toEqual([...categories].sort())
  })

  test('Polish: 1 próba, 2 próby, 5 prób, 22 próby, 25 prób (CLDR: one, few, many, few, many)', () => {
    const forms = { one: 'one', few: 'few', many: 'many', other: 'other' }
    expect([1, 2, 5, 22, 25, 12, 1.5].map((n) => plural('pl', n, forms))).toEqual(['one', 'few', 'many', 'few', 'many', 'many', 'other'])
    const left = [1, 2, 5, 22, 25].map((n) => languages.pl.attemptsLeft(n))
    expect(new Set(left.map((text) => text.replace(/\d+/, 'N'))).size).toBe(3)
    expect(left[1]!.replace('2', '22')).toBe(left[3]!)
    expect(left[2]!.replace('5', '25')).toBe(left[4]!)
  })

  test('Czech and Lithuanian, which `n === 1 ? … : …` got wrong too', () => {
    expect([1, 3, 5].map((n) => languages.cs.attemptsLeft(n).replace(/\d+/, 'N'))).toHaveLength(3)
    expect(new Set([1, 3, 5].map((n) => languages.cs.attemptsLeft(n).replace(/\d+/, 'N'))).size).toBe(3)
    // Lithuanian: 1 and 21 one way, 2 to 9 another, 10 to 20 a third.
    const lt = (n: number) => languages.lt.attemptsLeft(n).replace(/\d+/, 'N')
    expect(lt(21)).toBe(lt(1))
    expect(lt(22)).toBe(lt(2))
    expect(new Set([lt(1), lt(2), lt(10)]).size).toBe(3)
  })

  test('Arabic: zero, one, two, few (3 to 10), many (11 to 99) and other (100) each have their form', () => {
    const forms = { zero: 'zero', one: 'one', two: 'two', few: 'few', many: 'many', other: 'other' }
    expect([0, 1, 2, 3, 10, 11, 99, 100].map((n) => plural('ar', n, forms))).toEqual(['zero', 'one', 'two', 'few', 'few', 'many', 'many', 'other'])
    expect(new Set([0, 1, 2, 3, 11, 100].map((n) => languages.ar.attemptsLeft(n).replace(/\d+/, 'N'))).size).toBe(6)
  })

  test('English and German keep one and other', () => {
    expect(languages.en.attemptsLeft(1)).toBe('1 attempt left.')
    expect(languages.en.attemptsLeft(2)).toBe('2 attempts left.')
    expect(languages.de.attemptsLeft(1)).toBe('Noch 1 Versuch.')
    expect(languages.de.attemptsLeft(3)).toBe('Noch 3 Versuche.')
  })
})

describe('lists of ways', () => {
  test('“a or b” in each language’s own words (CLDR), Maltese given by hand', () => {
    expect(anyOf('en', ['a', 'b', 'c'])).toBe('a, b, or c')
    expect(anyOf('de', ['a', 'b'])).toBe('a oder b')
    expect(anyOf('pl', ['a', 'b'])).toBe('a lub b')
    expect(anyOf('mt', ['a', 'b', 'c'])).toBe('a, b jew c')
    expect(anyOf('mt', ['a'])).toBe('a')
  })
})
