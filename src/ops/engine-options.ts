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

/**
 * JavaScriptCore's last and most optimising compiler (FTL). The server's requests spend their time in the
 * database, the signature and Bun's own code; the code FTL compiles for them, and the memory it compiles in,
 * stay with the process. Without it a process peaked 10–15 MiB lower under the bench's load, the exchange,
 * the usage report and the visitor's flow at the same rates, the cheapest paths (validation, the key set)
 * about 6% slower and a face check frame 3% (docs/performance.md, issue 34's eleventh part).
 */
export const FTL_VARIABLE = 'BUN_JSC_useFTLJIT'

/** The engine's options the server sets, each unless the operator set it: the values are the server's choice. */
export const ENGINE_OPTIONS: Record<string, string> = {
  // 1 TiB, so that no machine the server runs on reaches the threshold.
  [HEAP_GROWTH_VARIABLE]: String(1024 * 1024),
  [FTL_VARIABLE]: 'false',
}

/**
 * Makes sure the server runs with {@link ENGINE_OPTIONS}; an option the operator set (any value) stands. The
 * engine reads them only when the process starts, so a process without one of them starts itself again with
 * them (`process.execve`: the same process id, flags and arguments, nothing of this run kept); the workers it
 * starts inherit them. Call first, before the server loads anything.
 */
export function withEngineOptions(): void {
  const missing = Object.entries(ENGINE_OPTIONS).filter(([name]) => process.env[name] === undefined)
  if (missing.length === 0 || typeof process.execve !== 'function') return
  const argv = ownCommandLine()
  process.execve(argv[0]!, argv, { ...process.env, ...Object.fromEntries(missing) })
}
