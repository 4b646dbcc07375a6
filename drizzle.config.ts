import { defineConfig } from 'drizzle-kit'

// `bun run db:generate` writes SQL migrations from the schema; they run on PGlite and Postgres alike.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './drizzle',
})
