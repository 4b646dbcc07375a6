import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FormatRegistry } from '@sinclair/typebox'
import { fullFormats } from 'elysia/type-system/format'
import { createTestContext, json, type TestContext } from '../helpers.ts'

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

/** Every string format named by a schema of the API, as its OpenAPI document lists them. */
async function formatsInSchemas(): Promise<Set<string>> {
  const formats = new Set<string>()
  const walk = (value: unknown) => {
    if (!value || typeof value !== 'object') return
    const node = value as Record<string, unknown>
    if (node.type === 'string' && typeof node.format === 'string') formats.add(node.format)
    for (const child of Object.values(node)) walk(child)
  }
  walk(await json(await ctx.request('/api/openapi.json')))
  return formats
}

describe("TypeBox's string formats (src/lib/schema-formats.ts)", () => {
  test("after the app's imports, a uuid is checked by Elysia's expression, not the OpenAPI plugin's Zod bridge", () => {
    // Only this file's imports (the app, through the helpers) set the registry here. The two checks differ on
    // the urn:uuid: form, which Elysia's accepts and Zod's refuses; the bridge built a Zod schema per value.
    const uuid = crypto.randomUUID()
    expect(FormatRegistry.Get('uuid')!(`urn:uuid:${uuid}`)).toBe(fullFormats.uuid.test(`urn:uuid:${uuid}`))
    expect(FormatRegistry.Get('uuid')!(`urn:uuid:${uuid}`)).toBe(true)
  })

  test('every format a schema of ours names is one Elysia defines, checked as it defines it', async () => {
    const named = await formatsInSchemas()
    expect(named.has('uuid')).toBe(true)
    for (const name of named) {
      const definition = (fullFormats as Record<string, unknown>)[name]
      expect(definition instanceof RegExp || typeof definition === 'function', name).toBe(true)
    }
    const uuid = FormatRegistry.Get('uuid')!
    expect(uuid(crypto.randomUUID())).toBe(true)
    expect(uuid('not-a-uuid')).toBe(false)
    expect(uuid(`${crypto.randomUUID()}x`)).toBe(false)
  })
})
