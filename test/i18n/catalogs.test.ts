import { describe, expect, test } from 'bun:test'
import { dashboardLanguageCodes, languageCodes } from '../../src/i18n/language-codes.ts'
import { dashboardLanguages, languages } from '../../src/i18n/languages.ts'

/**
 * Every catalog against English's: the same keys (the types say so too; this also catches a spread of
 * English standing in for a section), the same placeholders and code words, and no English left behind.
 */

type Leaf = { path: string; value: string | ((...args: never[]) => string) }

/** The messages of a catalog, each by its dotted path; a list's items count as messages of their own. */
function leaves(node: unknown, path = ''): Leaf[] {
  if (typeof node === 'string' || typeof node === 'function') return [{ path, value: node as Leaf['value'] }]
  return Object.entries(node as object).flatMap(([key, child]) => leaves(child, path ? `${path}.${key}` : key))
}

/** One value per parameter name the catalogs use: distinct, so that each can be found in the output. */
const samples: Record<string, unknown> = {
  site: 'Shop Example',
  age: 19,
  approvedAge: 31,
  n: 7,
  ways: ['WAY-ONE', 'WAY-TWO'],
  email: 'ana@shop.example',
  count: 7,
  min: 12,
  years: 9,
  month: 'MONTH-NAME 2026',
  used: 37,
  limit: 500,
  percent: '7 %',
  days: 11,
  max: 23,
  day: 'DAY-5',
  total: 41,
  uri: 'https://shop.example/cb',
  fallback: 'https://shop.example/',
  addresses: 'http://shop.example/cb',
  until: 'UNTIL-TIME',
  created: 'CREATED-DATE',
  host: 'gated.example',
  clientId: 'cl_SAMPLE_ID',
  ratio: '3.97:1',
}

/** The parameter names of English's function: what the message is given, whatever a translation names them. */
function parameterNames(fn: (...args: never[]) => string): string[] {
  const list = /^\(?([^)=]*)\)?\s*=>/.exec(fn.toString())?.[1] ?? ''
  return list
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean)
}

function argumentsFor(english: (...args: never[]) => string): unknown[] {
  return parameterNames(english).map((name) => {
    if (!(name in samples)) throw new Error(`no sample value for a parameter named ${name}`)
    return samples[name]
  })
}

/** A message as the visitor reads it: a function called with the sample values. */
function render(leaf: Leaf, english: Leaf): string {
  return typeof leaf.value === 'function' ? (leaf.value as (...args: unknown[]) => string)(...argumentsFor(english.value as (...args: never[]) => string)) : leaf.value
}

/** What must pass through translation unchanged: identifiers, constants, addresses, paths, flags, RFCs, arrows. */
const CODE_WORDS = /https?:\/\/[^\s,;)]*[^\s,;.)]|[a-z]+(?:_[a-z]+)+|\b[A-Z]+(?:_[A-Z]+)+\b|\/[a-z](?:[\w/.-]*[\w/-])?|[\w.-]+\.(?:md|ts)\b|\b\w+=\w+|--[a-z-]+|RFC \d+|§[\d.]*\d|sandbox: true|[←→↑↓]/g

function codeWords(text: string): string[] {
  return [...text.matchAll(CODE_WORDS)].map((match) => match[0]).sort()
}

/** English's function words; none is a word of another catalog's language (Irish "is" and Polish "to" are, so they are not here). */
const ENGLISH_WORDS = /\b(?:the|your|you|please|with|this|could|cannot|again)\b/i

function catalogChecks<L extends string>(name: string, catalogs: Record<L, object>, codes: readonly L[], sameAsEnglish: Record<string, readonly L[]>) {
  const english = leaves(catalogs['en' as L])
  const englishByPath = new Map(english.map((leaf) => [leaf.path, leaf]))
  const others = codes.filter((code) => code !== 'en')

  describe(`the ${name} catalogs`, () => {
    test.each(codes)('%s has every message of English, and nothing else', (code) => {
      const paths = leaves(catalogs[code]).map((leaf) => leaf.path)
      expect(paths.sort()).toEqual(english.map((leaf) => leaf.path).sort())
    })

    test.each(codes)('%s: every message is text, and a function message gives text for any count', (code) => {
      for (const leaf of leaves(catalogs[code])) {
        const englishLeaf = englishByPath.get(leaf.path)!
        expect(typeof leaf.value, leaf.path).toBe(typeof englishLeaf.value)
        expect(render(leaf, englishLeaf).trim().length, leaf.path).toBeGreaterThan(0)
        if (typeof leaf.value !== 'function') continue
        const names = parameterNames(englishLeaf.value as (...args: never[]) => string)
        // The plural categories: zero, one, two, few, many and other, in every language's rules.
        for (const n of [0, 1, 2, 3, 5, 11, 21, 22, 25, 101, 1_000_000]) {
          const args = names.map((p) => (typeof samples[p] === 'number' ? n : samples[p]))
          const text = (leaf.value as (...args: unknown[]) => string)(...args)
          expect(text.length, `${leaf.path}(${n})`).toBeGreaterThan(0)
          expect(text, `${leaf.path}(${n})`).not.toContain('undefined')
        }
      }
    })

    test.each(codes)('%s: a function message shows every value it is given that English shows', (code) => {
      for (const leaf of leaves(catalogs[code])) {
        if (typeof leaf.value !== 'function') continue
        const englishLeaf = englishByPath.get(leaf.path)!
        const englishText = render(englishLeaf, englishLeaf)
        const text = render(leaf, englishLeaf)
        const shown = argumentsFor(englishLeaf.value as (...args: never[]) => string)
          .flatMap((value) => (Array.isArray(value) ? value : [value]))
          .map(String)
          .filter((value) => englishText.includes(value))
        for (const value of shown) expect(text, `${code} ${leaf.path}`).toContain(value)
      }
    })

    test.each(codes)('%s keeps English’s code words: identifiers, addresses, paths, RFC numbers and arrows', (code) => {
      for (const leaf of leaves(catalogs[code])) {
        const englishLeaf = englishByPath.get(leaf.path)!
        expect(codeWords(render(leaf, englishLeaf)), `${code} ${leaf.path}`).toEqual(codeWords(render(englishLeaf, englishLeaf)))
      }
    })

    test.each(others)('%s leaves no English behind', (code) => {
      const untranslated: string[] = []
      for (const leaf of leaves(catalogs[code])) {
        const englishLeaf = englishByPath.get(leaf.path)!
        const text = render(leaf, englishLeaf)
        const allowed = sameAsEnglish[leaf.path]?.includes(code) ?? false
        if (!allowed && text === render(englishLeaf, englishLeaf)) untranslated.push(`${leaf.path}: ${text}`)
        if (ENGLISH_WORDS.test(text.replace(CODE_WORDS, ' '))) untranslated.push(`${leaf.path} (English words): ${text}`)
      }
      expect(untranslated).toEqual([])
    })

    test('the allow-list of messages that read the same as English names only messages that do', () => {
      for (const [path, allowed] of Object.entries(sameAsEnglish)) {
        const englishLeaf = englishByPath.get(path)
        expect(englishLeaf, path).toBeDefined()
        for (const code of allowed) {
          const leaf = leaves(catalogs[code]).find((candidate) => candidate.path === path)!
          expect(render(leaf, englishLeaf!), `${code} ${path}`).toBe(render(englishLeaf!, englishLeaf!))
        }
      }
    })
  })
}

catalogChecks('hosted page', languages, languageCodes, {
  // Romanian spells it as English does.
  methodBiometric: ['ro'],
})

catalogChecks('dashboard', dashboardLanguages, dashboardLanguageCodes, {
  // The product's name for itself, a file name, a figure and its count, and words these languages borrowed.
  dashboard: ['de'],
  mainNav: ['de'],
  codeCaption: ['de', 'es', 'fr', 'it'],
  chartBar: ['de', 'es', 'fr', 'it'],
  statusHeading: ['de'],
  statusLabel: ['de'],
  integrationHeading: ['de'],
  'methodNames.passkey': ['de', 'it'],
  email: ['it'],
  password: ['it'],
  no: ['es', 'it'],
  'counts.total': ['es', 'fr'],
  modeLabel: ['fr'],
  'webhooksPage.nav': ['de', 'es', 'fr'],
  'webhooksPage.deliveryColumns.status': ['de'],
  'webhooksPage.columns.action': ['fr'],
  'webhooksPage.deliveryColumns.action': ['fr'],
  'branding.logoLabel': ['de', 'es', 'fr', 'it'],
})

describe('a message that names a button quotes that button’s own words', () => {
  test.each(languageCodes)('%s', (code) => {
    const t = languages[code]
    expect(t.face.ready).toContain(t.face.capture)
    expect(t.face.challengeExpired).toContain(t.face.capture)
    expect(t.passkey.saved).toContain(t.passkey.use)
  })
})

describe('the language switch', () => {
  test('names every language in its own words, each name once', () => {
    const names = languageCodes.map((code) => languages[code].languageName)
    expect(new Set(names).size).toBe(languageCodes.length)
    // Intl.DisplayNames gives each language's name in that language (CLDR): ours match it, capitalised.
    for (const code of languageCodes) {
      const own = new Intl.DisplayNames([code], { type: 'language' }).of(code)!
      expect(languages[code].languageName.toLocaleLowerCase(code)).toBe(own.toLocaleLowerCase(code))
    }
  })
})
