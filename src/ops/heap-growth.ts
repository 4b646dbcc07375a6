import { ownCommandLine } from './workers.ts'

/**
 * JavaScriptCore's option for machines it sees with at least this much memory (16 GiB by default): there its
 * heap may grow to about three times its size between full collections (its "heap growth function"), against
 * twice below it. Garbage held that long keeps the native memory of requests answered long ago (their bodies,
 * headers and buffers): on a 24 GiB machine a server process peaked at 163–164 MiB under the bench's exchange
 * load, and at 121–129 MiB with the function off, with the same rates and the same cost a face check frame
 * (`bun bench/memory.ts --variants off`, `bench/face-stages.ts`; docs/performance.md).
 */
export const HEAP_GROWTH_VARIABLE = 'BUN_JSC_heapGrowthFunctionThresholdInMB'

/** The threshold the server sets: 1 TiB, so that no machine it runs on reaches it. */
const STEADY_THRESHOLD_MB = 1024 * 1024

/**
 * Makes sure the server runs with JavaScriptCore's heap growth function off, unless the operator set the option
 * (any value, theirs stands). The engine reads it only when the process starts, so a process without it starts
 * itself again with it (`process.execve`: the same process id, flags and arguments, nothing of this run
 * kept); the workers it starts inherit it. Call first, before the server loads anything.
 */
export function steadyHeapGrowth(): void {
  if (process.env[HEAP_GROWTH_VARIABLE] !== undefined || typeof process.execve !== 'function') return
  const argv = ownCommandLine()
  process.execve(argv[0]!, argv, { ...process.env, [HEAP_GROWTH_VARIABLE]: String(STEADY_THRESHOLD_MB) })
}
