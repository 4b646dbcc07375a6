import { expect, test } from 'bun:test'
import { join } from 'node:path'

/**
 * Libraries that only some requests need load at their first use, not with the server: each is memory that
 * every process would otherwise hold (issue 34, item 4: @auth0/mdl about 16 MiB, @peculiar/x509 about 9,
 * nodemailer and xml-crypto a few each). A fresh process (the tests share one module registry) boots the
 * services with SMTP set up but unused, serves a visitor's flow through the app, and lists the packages it
 * loaded.
 */
const LAZY = ['@auth0/mdl', 'cbor-x', 'cose-kit', '@peculiar/x509', 'reflect-metadata', 'nodemailer', 'xml-crypto', '@xmldom/xmldom', '@simplewebauthn/server', '@sd-jwt/sd-jwt-vc', 'onnxruntime-node', '@vladmandic/human', '@tensorflow/tfjs-core']

const ROOT = join(import.meta.dir, '..')

const child = `
import { createApp, createHandler } from '${ROOT}/src/app.tsx'
import { startServices } from '${ROOT}/src/boot.ts'
import { createClient } from '${ROOT}/src/clients/registry.ts'
import { silentLogger } from '${ROOT}/src/lib/log.ts'
import { completeForm, openPage } from '${ROOT}/bench/page-visit.ts'
import { PUBLIC_URL, testConfig } from '${ROOT}/test/helpers.ts'
const services = await startServices(testConfig({ DATABASE_URL: 'memory:', SMTP_URL: 'smtp://127.0.0.1:1', SMTP_FROM: 'ofage@shop.example' }), { log: silentLogger })
if (!services.deps.outbox) throw new Error('no outbox: SMTP was not set up')
const { client } = await createClient(services.deps, { name: 'Shop', redirectUris: ['https://shop.example/callback'], sandbox: true })
if (!client.methods.includes('credential') || !client.methods.includes('passkey')) throw new Error('the client offers neither the digital ID nor passkeys')
const handle = createHandler(services.deps, createApp(services.deps))
await completeForm(handle, PUBLIC_URL, await openPage(handle, PUBLIC_URL, client.id, 'https://shop.example/callback'))
await services.close()
const packages = new Set(Object.keys(require.cache).flatMap((path) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(path)?.[1] ?? []))
console.log(JSON.stringify([...packages]))
`

test('a server that served a visitor has not loaded the libraries of the wallet, certificates, SMTP, trust lists or the face check', async () => {
  const run = Bun.spawn(['bun', '-e', child], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  expect(err.slice(-2000)).not.toContain('error')
  expect(code).toBe(0)
  const loaded: string[] = JSON.parse(out.trim().split('\n').at(-1)!)
  // What it did load: the server's own stack (the list is read as it should be).
  expect(loaded).toEqual(expect.arrayContaining(['elysia', 'drizzle-orm', 'jose', '@electric-sql/pglite']))
  expect(loaded.filter((name) => LAZY.includes(name))).toEqual([])
}, 60_000)
