/** Column types every table uses: an instant in time (UTC, milliseconds), and raw bytes. */
import { timestamp, customType } from 'drizzle-orm/pg-core'

export const instant = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 })

export const bytea = customType<{ data: Uint8Array<ArrayBuffer>; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => new Uint8Array(value),
})
