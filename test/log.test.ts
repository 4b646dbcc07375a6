import { expect, test } from 'bun:test'
import { jsonLogger } from '../src/lib/log.ts'

/** Log lines are composed as text for speed: each must still be one JSON object with every field. */
test('each line is one JSON object: time, level, event, then the fields, whatever they hold', () => {
  const lines: string[] = []
  const log = jsonLogger((line) => lines.push(line))
  log.info('request', { request_id: 'r-1', status: 200, ms: 3 })
  log.error('odd "event"\n', { text: 'quote " backslash \\ newline \n', nested: { a: [1, null] }, gone: undefined })
  log.info('bare')
  log.info('empty', {})
  for (const line of lines) expect(line).not.toContain('\n')
  const parsed = lines.map((line) => JSON.parse(line))
  expect(parsed[0]).toEqual({ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), level: 'info', event: 'request', request_id: 'r-1', status: 200, ms: 3 })
  expect(parsed[1]).toEqual({ time: expect.any(String), level: 'error', event: 'odd "event"\n', text: 'quote " backslash \\ newline \n', nested: { a: [1, null] } })
  expect(parsed[2]).toEqual({ time: expect.any(String), level: 'info', event: 'bare' })
  expect(parsed[3]).toEqual({ time: expect.any(String), level: 'info', event: 'empty' })
  expect(Math.abs(Date.parse(parsed[0].time) - Date.now())).toBeLessThan(5_000)
})
