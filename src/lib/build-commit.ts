/** Written in by `bun run build` (`--define OFAGE_COMMIT='…'`): the commit the binary was built from. */
declare const OFAGE_COMMIT: string | undefined

/**
 * The commit this program was built from, for `ofage --version` and the start-up log: the one `bun run build`
 * wrote into the binary, else (run from a checkout) what git says of the checkout now, else "unknown".
 */
export function buildCommit(): string {
  if (typeof OFAGE_COMMIT === 'string') return OFAGE_COMMIT
  try {
    const git = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: import.meta.dir, stdout: 'pipe', stderr: 'ignore' })
    const commit = git.stdout.toString().trim()
    return git.exitCode === 0 && /^[0-9a-f]{4,40}$/.test(commit) ? commit : 'unknown'
  } catch {
    // No git on this machine.
    return 'unknown'
  }
}
