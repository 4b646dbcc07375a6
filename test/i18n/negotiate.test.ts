import { describe, expect, test } from 'bun:test'
import { isDashboardLanguage, isLanguage, pickDashboardLanguage, pickLanguage } from '../../src/i18n/negotiate.ts'

describe('the page’s language', () => {
  test('an explicit ?lang= wins over Accept-Language', () => {
    expect(pickLanguage('de', 'pl')).toBe('pl')
    expect(pickLanguage('de', 'ar')).toBe('ar')
  })

  test('else the best Accept-Language match by quality value, region subtags matched on the language (pt-BR is pt)', () => {
    expect(pickLanguage('pt-BR,pt;q=0.9,en;q=0.5')).toBe('pt')
    expect(pickLanguage('ja, uk;q=0.8, de;q=0.9')).toBe('de')
    expect(pickLanguage('ga-IE')).toBe('ga')
    expect(pickLanguage('mt;q=0, sv;q=0.2')).toBe('sv')
    expect(pickLanguage('tr-TR,ar;q=0.9')).toBe('tr')
  })

  test('else English: nothing asked, nothing we speak, or a language we do not speak explicitly', () => {
    expect(pickLanguage(undefined)).toBe('en')
    expect(pickLanguage('ja, zh;q=0.9, *;q=0.1')).toBe('en')
    expect(pickLanguage('ru', 'ru')).toBe('en')
    expect(pickLanguage('', 'constructor')).toBe('en')
    expect(pickLanguage('__proto__, toString;q=0.9')).toBe('en')
  })

  test('27 languages: the EU’s 24, Arabic, Turkish and Ukrainian', () => {
    const spoken = 'bg cs da de el en es et fi fr ga hr hu it lt lv mt nl pl pt ro sk sl sv ar tr uk'.split(' ')
    expect(spoken.filter((code) => !isLanguage(code))).toEqual([])
    expect(isLanguage('ru')).toBe(false)
  })
})

describe('the dashboard’s language', () => {
  test('the best of the five it speaks, else English', () => {
    expect(pickDashboardLanguage('pl, de;q=0.9')).toBe('de')
    expect(pickDashboardLanguage('pl')).toBe('en')
    expect(pickDashboardLanguage('es-MX', 'it')).toBe('it')
    expect(pickDashboardLanguage('fr-CA', 'pl')).toBe('fr')
    expect(['de', 'en', 'es', 'fr', 'it'].every(isDashboardLanguage)).toBe(true)
    expect(isDashboardLanguage('pl')).toBe(false)
  })
})
