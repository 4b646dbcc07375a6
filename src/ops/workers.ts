import type { Logger } from '../lib/log.ts'

/** Set in the environment of the processes the first one starts: their number, from 1, and its pid. */
const WORKER_ENV = 'OFAGE_WORKER'
const PARENT_ENV = 'OFAGE_WORKER_PARENT'

/** This process's place among the server's workers: 0 for the first (the one an operator started). */
export function workerIndex(): number {
  return Number(process.env[WORKER_ENV] ?? 0)
}

/**
 * The command line that runs this program again. Run by bun: the runtime flags (the header bound) and the
 * script again. A compiled binary carries its flags itself and takes only the command line's own arguments
 * (its argv[1] is its embedded entry).
 */
export function ownCommandLine(): string[] {
  const compiled = process.argv[1]?.startsWith('/$bunfs/') ?? false
  return compiled ? [process.execPath, ...process.argv.slice(2)] : [process.execPath, ...process.execArgv, ...process.argv.slice(1)]
}

/**
 * Starts `count` more server processes, the same program with the same arguments and environment, each
 * marked with its index. One that dies is started again after a second; `stop()` sends each SIGTERM and
 * waits for it to finish its requests. Bun has no cluster module that shares a listening socket on Linux,
 * so the workers bind the port themselves with `reusePort`.
 */
export function startWorkers(count: number, log: Logger): { stop(): Promise<void> } {
  let stopping = false
  const children = new Map<number, ReturnType<typeof Bun.spawn>>()
  const start = (index: number) => {
    const child = Bun.spawn(ownCommandLine(), { env: { ...process.env, [WORKER_ENV]: String(index), [PARENT_ENV]: String(process.pid) }, stdio: ['ignore', 'inherit', 'inherit'] })
    children.set(index, child)
    child.exited.then((code) => {
      if (stopping) return
      log.error('worker_exited', { worker: index, code })
      setTimeout(() => !stopping && start(index), 1_000)
    })
  }
  for (let index = 1; index <= count; index++) start(index)
  return {
    async stop() {
      stopping = true
      for (const child of children.values()) child.kill('SIGTERM')
      await Promise.all([...children.values()].map((child) => child.exited))
    },
  }
}

/**
 * In a worker: calls `onOrphaned` once the first process is gone (killed with SIGKILL, which it cannot
 * forward), so that no worker keeps serving the port without it. Linux hands orphans to another parent.
 */
export function watchParent(onOrphaned: () => void): void {
  // The first process's pid as it started this one: a worker orphaned while it was still starting up
  // already has another parent by the time it watches.
  const parent = Number(process.env[PARENT_ENV] ?? process.ppid)
  if (process.ppid !== parent) return onOrphaned()
  const timer = setInterval(() => {
    if (process.ppid === parent) return
    clearInterval(timer)
    onOrphaned()
  }, 500)
  timer.unref()
}
