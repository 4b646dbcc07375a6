import { main } from './cli.ts'

/** `bun start`: configuration → database → migrations → keys → HTTP server. */
await main(['serve'])
