import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../errors.ts'

type LockInfo = { pid: number; holder: string }

/**
 * Takes the embedded store's lock: PGlite allows one process per data directory, so a CLI command or a
 * second server must never open it behind a running server's back (DESIGN.md). A lock left by a process
 * that no longer runs is taken over. Returns the function that releases it.
 */
export function acquireDataDirLock(dataDir: string, holder: string): () => void {
  const file = join(dataDir, 'ofage.lock')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, JSON.stringify({ pid: process.pid, holder } satisfies LockInfo), { flag: 'wx', mode: 0o600 })
      return () => rmSync(file, { force: true })
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'EEXIST') throw cause
    }
    const owner = readLock(file)
    if (owner && isRunning(owner.pid)) {
      throw new ConfigError(
        'DATA_DIR',
        `${dataDir} is in use by ${owner.holder} (pid ${owner.pid}); stop it first, or point DATABASE_URL at Postgres to run several processes`,
      )
    }
    rmSync(file, { force: true })
  }
  throw new ConfigError('DATA_DIR', `${dataDir}: could not take the lock file ${file}`)
}

function readLock(file: string): LockInfo | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockInfo>
    return typeof parsed.pid === 'number' ? { pid: parsed.pid, holder: String(parsed.holder ?? 'another process') } : undefined
  } catch {
    return undefined
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (cause) {
    return (cause as NodeJS.ErrnoException).code === 'EPERM'
  }
}
