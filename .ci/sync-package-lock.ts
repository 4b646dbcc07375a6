// Rebuilds package-lock.json from the tree `bun install` made, so that npm installs exactly the versions
// bun.lock pins (test/lockfiles.test.ts checks it). Run after changing dependencies: `bun install`, then
// `bun .ci/sync-package-lock.ts` (from the repository root). With no lockfile, npm builds its lock from what node_modules holds.
import { rmSync } from 'node:fs'
import bunLock from '../bun.lock'

type NpmEntry = { version?: string; integrity?: string; dev?: boolean; optional?: boolean; [key: string]: unknown }
type BunEntry = [string, string, { optionalDependencies?: Record<string, string> }, string]

/** npm writes the lock (from node_modules when there is none, else from the lock), never node_modules. */
function npmLockOnly() {
  const npm = Bun.spawnSync(['npm', 'install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], {
    stdout: 'inherit',
    stderr: 'inherit',
  })
  if (npm.exitCode !== 0) process.exit(npm.exitCode ?? 1)
  rmSync('node_modules/.package-lock.json', { force: true })
}

rmSync('package-lock.json', { force: true })
npmLockOnly()

const lock = await Bun.file('package-lock.json').json()
const packages: Record<string, NpmEntry> = lock.packages
const bunEntries = Object.values((bunLock as { packages: Record<string, BunEntry> }).packages)
const integrityOf = new Map(bunEntries.map(([id, , , integrity]) => [id, integrity]))

// npm takes the checksums of what it did not download from bun.lock, so `npm ci` verifies every tarball.
for (const [path, entry] of Object.entries(packages)) {
  if (path === '' || entry.integrity) continue
  const integrity = integrityOf.get(`${nameAt(path)}@${entry.version}`)
  if (integrity) entry.integrity = integrity
}

// Optional dependencies the registry lacks (cbor-extract's prebuilt binaries at 2.2.3) are left out of
// bun.lock and of the tree, but `npm ci` refuses a lock that does not name them; named, npm tries each,
// is told it does not exist, and goes on, as it does for any optional dependency that fails.
for (const [id, , meta] of bunEntries) {
  const parent = Object.entries(packages).find(([path, entry]) => `${nameAt(path)}@${entry.version}` === id)?.[1]
  for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
    if (Object.keys(packages).some((path) => nameAt(path) === name)) continue
    packages[`node_modules/${name}`] = { version, dev: parent?.dev, optional: true }
  }
}

lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)))
await Bun.write('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`)
// Once more, so that the file is in npm's own layout and a later `npm install` leaves it as it is.
npmLockOnly()

function nameAt(path: string): string {
  return path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)
}
