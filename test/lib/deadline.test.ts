import { describe, expect, test } from 'bun:test'
import { tickOf, withDeadline } from '../../src/lib/deadline.ts'

const never = () => new Promise<string>(() => {})

describe('withDeadline', () => {
  test('a work that settles in time gives its value or its error', async () => {
    expect(await withDeadline(Promise.resolve('done'), 50, () => 'late')).toBe('done')
    expect(await withDeadline(Bun.sleep(5).then(() => 'slow but in time'), 200, () => 'late')).toBe('slow but in time')
    await expect(withDeadline(Promise.reject(new Error('failed')), 50, () => 'late')).rejects.toThrow('failed')
  })

  test('a work that never settles gets the answer for its deadline, once it has passed and within a tick', async () => {
    const started = performance.now()
    expect(await withDeadline(never(), 60, () => 'deadline')).toBe('deadline')
    const waited = performance.now() - started
    expect(waited).toBeGreaterThanOrEqual(59)
    expect(waited).toBeLessThan(60 + tickOf(60) + 500)
  })

  test('each of many works waiting at once ends at its own deadline, whatever the others do', async () => {
    const results = await Promise.all([
      withDeadline(never(), 40, () => 'a: deadline'),
      withDeadline(Bun.sleep(5).then(() => 'b: done'), 40, () => 'b: deadline'),
      withDeadline(never(), 80, () => 'c: deadline'),
      Bun.sleep(20).then(() => withDeadline(never(), 40, () => 'd: deadline')),
      withDeadline(Bun.sleep(60).then(() => 'e: done'), 200, () => 'e: deadline'),
    ])
    expect(results).toEqual(['a: deadline', 'b: done', 'c: deadline', 'd: deadline', 'e: done'])
  })

  test('an answer for the deadline that throws rejects, rather than throwing in a timer', async () => {
    await expect(
      withDeadline(never(), 20, () => {
        throw new Error('no answer')
      }),
    ).rejects.toThrow('no answer')
  })

  test('a work that settles after its deadline changes nothing', async () => {
    let settle!: (value: string) => void
    const work = new Promise<string>((resolve) => (settle = resolve))
    expect(await withDeadline(work, 20, () => 'deadline')).toBe('deadline')
    settle('too late')
    expect(await withDeadline(Promise.resolve('next'), 20, () => 'deadline')).toBe('next')
  })

  test('a length of deadline used again after every work with it ended is watched again', async () => {
    expect(await withDeadline(never(), 15, () => 'first')).toBe('first')
    await Bun.sleep(tickOf(15) * 3)
    expect(await withDeadline(never(), 15, () => 'second')).toBe('second')
    expect(await withDeadline(Promise.resolve('in time'), 15, () => 'late')).toBe('in time')
  })

  test('a deadline is checked every twentieth of its length, from 1 ms to 500 ms', () => {
    expect([tickOf(1), tickOf(60), tickOf(1000), tickOf(10_000), tickOf(60_000)]).toEqual([1, 3, 50, 500, 500])
  })
})
