import { afterAll, expect, test } from 'bun:test'
import { startServices } from '../src/boot.ts'
import { DEMO_CLIENT_ID } from '../src/demo/demo-client.ts'
import { findClient } from '../src/clients/registry.ts'
import { freshDatabaseUrl, freshDataDir, onPostgres, testConfig } from './helpers.ts'

const embedded = await freshDataDir()
const dataDir = embedded.path
const database = await freshDatabaseUrl()
afterAll(async () => {
  await database.drop()
  embedded.remove()
})

/** One database for two starts: a directory of the embedded store, or a fresh Postgres database. */
const configAt = (publicUrl: string) => testConfig({ OFAGE_DEMO: '1', PUBLIC_URL: publicUrl, ...(onPostgres ? { DATABASE_URL: database.url } : { DATABASE_URL: '', DATA_DIR: dataDir }) })

async function demoRedirectUris(publicUrl: string, options: { syncDemoClient?: boolean }): Promise<string[]> {
  const services = await startServices(configAt(publicUrl), options)
  try {
    return (await findClient(services.deps.db, DEMO_CLIENT_ID))!.redirectUris
  } finally {
    await services.close()
  }
}

test("a CLI command never points the server's demo at the shell's PUBLIC_URL; the server's next start does (issue 19)", async () => {
  expect(await demoRedirectUris('http://localhost:3200', { syncDemoClient: true })).toEqual(['http://localhost:3200/demo/callback'])
  // A command opening the database itself, from a shell whose PUBLIC_URL is the default.
  expect(await demoRedirectUris('http://localhost:3000', {})).toEqual(['http://localhost:3200/demo/callback'])
  expect(await demoRedirectUris('http://localhost:3300', { syncDemoClient: true })).toEqual(['http://localhost:3300/demo/callback'])
}, 60_000)
