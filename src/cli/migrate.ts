import { describeMigrations, upToDate } from '../db/migrate.ts'
import { databaseCommand, jsonOption } from './command.ts'

/** `ofage migrate`: opening the database migrated it (boot.ts); this says what that did. */
export const migrate = databaseCommand({
  kind: 'database',
  name: 'migrate',
  usage: 'migrate                                 apply database migrations',
  subcommands: [],
  options: { ...jsonOption },
  async run(services) {
    const report = services.migrations ?? upToDate()
    return { json: { migrated: true, ...report }, text: describeMigrations(report) }
  },
})
