import '@elysiajs/openapi'
import { FormatRegistry } from '@sinclair/typebox'
import { fullFormats } from 'elysia/type-system/format'

/**
 * TypeBox's string formats, checked as Elysia checks them. Importing @elysiajs/openapi replaces 36 formats
 * in TypeBox's one global registry (`uuid`, `email`, `url`, `date`, `ipv4` …) with functions that build a
 * Zod or Valibot schema for every value they check: the `uuid` of the exchange's `transaction_id` paid it on
 * every token response (a profile put it at about 80 µs; docs/decisions.md has what was measured). This
 * module is evaluated after that import (it imports it first) and puts back the check Elysia registers from
 * its `fullFormats` (a regular expression or a function) for each format there. `date-time`, which Elysia
 * checks with a function of its own, is not among those the bridges replace; formats only the bridges define
 * are left to them, and no schema of ours names one (test/lib/schema-formats.test.ts).
 */
for (const [name, format] of Object.entries(fullFormats)) {
  if (name === 'date-time') continue
  if (format instanceof RegExp) FormatRegistry.Set(name, (value) => format.test(value))
  else if (typeof format === 'function') FormatRegistry.Set(name, format as (value: string) => boolean)
}
