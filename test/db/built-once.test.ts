import { expect, test } from 'bun:test'
import type { Database } from '../../src/db/client.ts'
import { builtOnce } from '../../src/db/prepared.ts'

test('a statement is built once per database, and again for another database', () => {
  const builds: Database[] = []
  const statement = builtOnce((db) => (builds.push(db), { db }))
  const first = {} as Database
  const second = {} as Database
  expect(statement(first)).toBe(statement(first))
  expect(statement(second).db).toBe(second)
  expect(statement(second)).not.toBe(statement(first))
  expect(builds).toEqual([first, second])
})
