/**
 * The database schema, one file a concept under src/db/schema/ (issue 33: this file was 550 lines); drizzle-kit
 * reads this file (drizzle.config.ts), and every module imports the tables from here.
 */
export * from './schema/clients.ts'
export * from './schema/verifications.ts'
export * from './schema/credentials.ts'
export * from './schema/service.ts'
export * from './schema/passkeys.ts'
export * from './schema/webhooks.ts'
export * from './schema/dashboard.ts'
