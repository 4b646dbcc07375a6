// Applies the patches named in package.json's `patchedDependencies` to the installed packages, so that
// `npm install` and `npm ci` give the same code as `bun install` (which applies them itself, and then this
// finds them applied and changes nothing). Runs as the root `postinstall` under Node or Bun; plain
// JavaScript because Node 20 cannot run TypeScript. A patch that neither applies nor is already applied
// fails the install: a silently unpatched driver is what this exists to prevent (issue 19, Found 7).
import { chmodSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { applyPatch, parsePatch, reversePatch } from 'diff'

// The project's root; a test passes another one holding a copy of the packages.
const root = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '../../..')
const { patchedDependencies = {} } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

for (const [spec, patchPath] of Object.entries(patchedDependencies)) {
  const at = spec.lastIndexOf('@')
  const name = spec.slice(0, at)
  const version = spec.slice(at + 1)
  const packageDir = join(root, 'node_modules', name)
  const installed = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).version
  if (installed !== version) fail(`${name} ${installed} is installed, but ${patchPath} is for ${version}`)

  let changed = 0
  for (const filePatch of parsePatch(readFileSync(join(root, patchPath), 'utf8'))) {
    const file = join(packageDir, filePatch.newFileName.replace(/^b\//, ''))
    const text = readFileSync(file, 'utf8')
    // Already patched (by Bun, or by an earlier run) when undoing the patch would succeed.
    if (applyPatch(text, reversePatch(filePatch)) !== false) continue
    const patched = applyPatch(text, filePatch)
    if (patched === false) fail(`${patchPath} does not apply to ${file}`)
    replaceFile(file, patched)
    changed++
  }
  console.log(`${spec}: ${changed ? `applied ${patchPath} (${changed} files)` : 'patch already applied'}`)
}

/**
 * Writes a new file and renames it over the old one instead of writing in place: a package manager may
 * hard-link installed files to its cache (Bun does), and an in-place write would patch the cache too.
 */
function replaceFile(file, text) {
  const temporary = `${file}.ofage-patch`
  writeFileSync(temporary, text)
  chmodSync(temporary, statSync(file).mode)
  renameSync(temporary, file)
}

function fail(message) {
  console.error(`apply-patches: ${message}`)
  process.exit(1)
}
