import { expect, test } from 'bun:test'
import { createExpiringCache, type Loaded } from '../../src/lib/expiring-cache.ts'

/** A cache on a clock the test moves, with a loader that counts its calls and answers what the test says. */
function setup(options: { maxEntries?: number; maxBytes?: number } = {}) {
  let clock = 1_000_000
  const loads: string[] = []
  const cache = createExpiringCache<{ bytes: number; name: string }, 'unreachable'>({
    now: () => clock,
    maxEntries: options.maxEntries ?? 10,
    maxBytes: options.maxBytes,
    sizeOf: (value) => value.bytes,
  })
  const loader = (key: string, answer: Loaded<{ bytes: number; name: string }, 'unreachable'>) => async () => {
    loads.push(key)
    return answer
  }
  return { cache, loads, loader, at: (ms: number) => (clock = ms), now: () => clock }
}

test('a value is kept until its own until, on the injected clock, then loaded again', async () => {
  const { cache, loads, loader, at } = setup()
  const until = 1_000_000 + 60_000
  expect(await cache.get('a', loader('a', { value: { bytes: 1, name: 'first' }, until }))).toEqual({ bytes: 1, name: 'first' })
  at(until - 1)
  expect((await cache.get('a', loader('a', { value: { bytes: 1, name: 'second' }, until: until + 60_000 })) as { name: string }).name).toBe('first')
  at(until)
  expect((await cache.get('a', loader('a', { value: { bytes: 1, name: 'second' }, until: until + 60_000 })) as { name: string }).name).toBe('second')
  expect(loads).toEqual(['a', 'a'])
})

test('a value good for no time is handed to its caller and never kept', async () => {
  const { cache, loads, loader, now } = setup()
  for (const until of [0, now(), now() + 1]) {
    expect(await cache.get('crl', loader('crl', { value: { bytes: 1, name: 'x' }, until }))).toMatchObject({ name: 'x' })
  }
  // until = now + 1 is good for this millisecond only: the look at the same instant still holds it.
  expect(await cache.get('crl', loader('crl', { value: { bytes: 1, name: 'y' }, until: 0 }))).toMatchObject({ name: 'x' })
  expect(loads).toEqual(['crl', 'crl', 'crl'])
})

test('a failure reaches everyone waiting on the load and is not kept', async () => {
  const { cache, loads, loader } = setup()
  const answers = await Promise.all([1, 2, 3].map(() => cache.get('down', loader('down', 'unreachable'))))
  expect(answers).toEqual(['unreachable', 'unreachable', 'unreachable'])
  expect(loads).toEqual(['down'])
  await cache.get('down', loader('down', 'unreachable'))
  expect(loads).toEqual(['down', 'down'])
})

test('loads of one key at once share one', async () => {
  const { cache, now } = setup()
  let calls = 0
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  const load = async () => {
    calls++
    await gate
    return { value: { bytes: 1, name: 'shared' }, until: now() + 1000 }
  }
  const waiting = Promise.all([cache.get('k', load), cache.get('k', load), cache.get('k', load)])
  release()
  expect((await waiting).map((value) => (value as { name: string }).name)).toEqual(['shared', 'shared', 'shared'])
  expect(calls).toBe(1)
})

test('bounded in bytes and entries, the least recently used going first', async () => {
  const { cache, loads, loader, now } = setup({ maxEntries: 3, maxBytes: 100 })
  const value = (name: string, bytes: number) => ({ value: { bytes, name }, until: now() + 60_000 })
  await cache.get('a', loader('a', value('a', 40)))
  await cache.get('b', loader('b', value('b', 40)))
  await cache.get('a', loader('a', value('a', 40))) // a used again: b is now the oldest
  await cache.get('c', loader('c', value('c', 40))) // 120 bytes: b goes
  await cache.get('a', loader('a', value('a', 40)))
  await cache.get('b', loader('b', value('b', 10)))
  expect(loads).toEqual(['a', 'b', 'c', 'b'])
  // Entries: a fourth small one pushes out the least recently used of three.
  const few = setup({ maxEntries: 2 })
  for (const key of ['x', 'y', 'x', 'z', 'x', 'y']) await few.cache.get(key, few.loader(key, { value: { bytes: 1, name: key }, until: few.now() + 60_000 }))
  expect(few.loads).toEqual(['x', 'y', 'z', 'y'])
})
