import { steadyHeapGrowth } from './ops/heap-growth.ts'

// Before the server's modules load: this may start the process again (src/ops/heap-growth.ts).
steadyHeapGrowth()
const { main } = await import('./cli.ts')

/** `bun start`: configuration → database → migrations → keys → HTTP server. */
await main(['serve'])
