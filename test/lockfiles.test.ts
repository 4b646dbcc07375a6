import { expect, test } from 'bun:test'
import bunLock from '../bun.lock'
import npmLock from '../package-lock.json'

/**
 * `npm install` and `bun install` give the same tree: package-lock.json pins the same name@version set as
 * bun.lock, with the same checksums (issue 19, Found 7). .ci/sync-package-lock.ts rebuilds it.
 */
type BunEntry = [string, string, { optionalDependencies?: Record<string, string> }, string]
const bunEntries = Object.values((bunLock as unknown as { packages: Record<string, BunEntry> }).packages)
const npmEntries = Object.entries(npmLock.packages as Record<string, { version?: string; integrity?: string; optional?: boolean }>)
  .filter(([path]) => path !== '')
  .map(([path, entry]) => {
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)
    return { ...entry, name, id: `${name}@${entry.version}` }
  })

const bunIds = new Set(bunEntries.map(([id]) => id))
const bunNames = new Set(bunEntries.map(([id]) => id.slice(0, id.lastIndexOf('@'))))
/** Optional dependencies that bun.lock leaves out because the registry lacks them, with the version asked for. */
const absentOptional = new Map(
  bunEntries.flatMap(([, , meta]) => Object.entries(meta.optionalDependencies ?? {})).filter(([name]) => !bunNames.has(name)),
)

test('package-lock.json pins the same name@version set as bun.lock', () => {
  const npmIds = new Set(npmEntries.filter((entry) => !absentOptional.has(entry.name)).map((entry) => entry.id))
  expect([...npmIds].filter((id) => !bunIds.has(id))).toEqual([])
  expect([...bunIds].filter((id) => !npmIds.has(id))).toEqual([])
  expect(npmIds.size).toBeGreaterThan(300)
})

test('the packages npm names beyond bun.lock are optional ones the registry lacks, at the version asked for', () => {
  const extra = npmEntries.filter((entry) => !bunIds.has(entry.id))
  expect(extra.map((entry) => entry.name).sort()).toEqual([...absentOptional.keys()].sort())
  for (const entry of extra) {
    expect(entry.optional).toBe(true)
    expect(entry.version).toBe(absentOptional.get(entry.name)!)
  }
})

test('npm verifies each tarball against the checksum bun.lock holds', () => {
  const integrityOf = new Map(bunEntries.map(([id, , , integrity]) => [id, integrity]))
  const mismatched = npmEntries.filter((entry) => bunIds.has(entry.id) && entry.integrity !== integrityOf.get(entry.id))
  expect(mismatched.map((entry) => entry.id)).toEqual([])
})

test('both lockfiles pin what package.json asks for', () => {
  const root = npmLock.packages[''] as { dependencies: Record<string, string>; devDependencies: Record<string, string> }
  const workspace = (bunLock as unknown as { workspaces: Record<string, typeof root> }).workspaces['']!
  expect(root.dependencies).toEqual(workspace.dependencies)
  expect(root.devDependencies).toEqual(workspace.devDependencies)
})
