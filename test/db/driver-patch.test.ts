import { expect, test } from 'bun:test'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { applyPatch, parsePatch, reversePatch } from 'diff'
import postgres from 'postgres'
import { ConfigError } from '../../src/errors.ts'
import { DRIVER_PATCH, openDatabase } from '../../src/db/client.ts'
import packageJson from '../../package.json'

/**
 * The postgres.js fixes in src/db/patches/ reach every install: `bun install` applies them through
 * `patchedDependencies`, `npm install`/`npm ci` through the root postinstall (src/db/patches/apply-patches.mjs),
 * and the server refuses Postgres through a driver without them (issue 19, Found 7).
 */
const root = join(import.meta.dir, '../..')
const filePatches = parsePatch(readFileSync(join(root, DRIVER_PATCH), 'utf8'))
const installed = (file: string) => readFileSync(join(root, 'node_modules/postgres', file), 'utf8')
const fileOf = (filePatch: (typeof filePatches)[number]) => filePatch.newFileName!.replace(/^b\//, '')

test('package.json names the patch the server checks for', () => {
  expect(packageJson.patchedDependencies).toEqual({ 'postgres@3.4.9': DRIVER_PATCH })
  expect(packageJson.scripts.postinstall).toBe('node src/db/patches/apply-patches.mjs')
})

test('the installed driver carries every hunk of the patch, and the marker the server checks', () => {
  expect(filePatches.map(fileOf)).toEqual(['src/connection.js', 'src/index.js'])
  for (const filePatch of filePatches) {
    // jsdiff, not the package manager, decides: undoing the patch must succeed on the installed text.
    expect(applyPatch(installed(fileOf(filePatch)), reversePatch(filePatch))).toBeString()
  }
  expect(Reflect.get(postgres, 'ofagePatched')).toBe(true)
})

/** A project of its own for the postinstall: package.json's patchedDependencies, the patch, a copy of the driver. */
function projectWithDriverCopy(): string {
  const project = mkdtempSync(join(tmpdir(), 'ofage-patch-'))
  writeFileSync(join(project, 'package.json'), JSON.stringify({ patchedDependencies: packageJson.patchedDependencies }))
  cpSync(join(root, DRIVER_PATCH), join(project, DRIVER_PATCH))
  cpSync(join(root, 'node_modules/postgres'), join(project, 'node_modules/postgres'), { recursive: true })
  return project
}

test('the postinstall patches an unpatched copy of the driver, and a second run changes nothing', () => {
  const project = projectWithDriverCopy()
  try {
    for (const filePatch of filePatches) {
      const pristine = applyPatch(installed(fileOf(filePatch)), reversePatch(filePatch)) as string
      writeFileSync(join(project, 'node_modules/postgres', fileOf(filePatch)), pristine)
    }
    const run = () => Bun.spawnSync(['node', join(root, 'src/db/patches/apply-patches.mjs'), project], { env: { ...process.env } })

    const first = run()
    expect(first.stdout.toString()).toBe(`postgres@3.4.9: applied ${DRIVER_PATCH} (2 files)\n`)
    for (const filePatch of filePatches) {
      const file = fileOf(filePatch)
      expect(readFileSync(join(project, 'node_modules/postgres', file), 'utf8')).toBe(installed(file))
    }
    const second = run()
    expect(second.exitCode).toBe(0)
    expect(second.stdout.toString()).toBe('postgres@3.4.9: patch already applied\n')
  } finally {
    rmSync(project, { recursive: true, force: true })
  }
})

test('the postinstall fails the install when the patch does not apply', () => {
  const project = projectWithDriverCopy()
  try {
    writeFileSync(join(project, 'node_modules/postgres/src/index.js'), 'export default function Postgres() {}\n')
    const run = Bun.spawnSync(['node', join(root, 'src/db/patches/apply-patches.mjs'), project])
    expect(run.exitCode).toBe(1)
    expect(run.stderr.toString()).toContain(`apply-patches: ${DRIVER_PATCH} does not apply to`)
  } finally {
    rmSync(project, { recursive: true, force: true })
  }
})

test('the server refuses Postgres through an unpatched driver, in one line, before connecting', async () => {
  Reflect.deleteProperty(postgres, 'ofagePatched')
  try {
    // Port 9 (discard) on a reserved address: a connection attempt would fail differently, and slowly.
    const opening = openDatabase({ kind: 'postgres', url: 'postgres://nobody@192.0.2.1:9/none' })
    await expect(opening).rejects.toBeInstanceOf(ConfigError)
    await expect(opening).rejects.toThrow(
      `DATABASE_URL needs the postgres driver patched by ${DRIVER_PATCH}, and the installed one is not: ` +
        'run `npm install` or `bun install` again, with install scripts allowed',
    )
  } finally {
    Reflect.set(postgres, 'ofagePatched', true)
  }
})
