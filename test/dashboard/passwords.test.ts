import { describe, expect, test } from 'bun:test'
import { dummyHash, hashPassword, verifyPassword } from '../../src/dashboard/passwords.ts'

/** The fields of an argon2 PHC string: parameters, and the salt's and digest's lengths in bytes. */
function shapeOf(hash: string) {
  const [, algorithm, version, parameters, salt, digest] = hash.split('$')
  return { algorithm, version, parameters, saltBytes: Buffer.from(salt!, 'base64').length, digestBytes: Buffer.from(digest!, 'base64').length }
}

describe('the hash an unknown email is checked against', () => {
  const cost = { memoryCost: 8192, timeCost: 2 }

  test('has the form, the cost and the lengths of a real hash at the same cost, so verifying it is the same argon2 run', async () => {
    expect(shapeOf(dummyHash(cost))).toEqual(shapeOf(await hashPassword('a real password of some length', cost)))
    expect(shapeOf(dummyHash({ memoryCost: 19456, timeCost: 3 }))).toEqual(shapeOf(await hashPassword('another password', { memoryCost: 19456, timeCost: 3 })))
  })

  test('is one per cost in a process, and its salt and digest are random', () => {
    expect(dummyHash(cost)).toBe(dummyHash({ ...cost }))
    const other = dummyHash({ memoryCost: 8192, timeCost: 3 })
    expect(other.split('$')[4]).not.toBe(dummyHash(cost).split('$')[4])
  })

  // A dummy that Bun could not parse would be refused at once, without the argon2 run: the timing would then
  // tell an unknown email from a known one. verifyPassword hides such a refusal, so it is checked here.
  test('is read by Bun and matches no password', async () => {
    for (const password of ['', 'a', 'a real password of some length', 'x'.repeat(256)]) {
      expect(await Bun.password.verify(password, dummyHash(cost))).toBe(false)
      expect(await verifyPassword(password, null, cost)).toBe(false)
    }
  })

  test('a real hash still verifies its password and no other', async () => {
    const hash = await hashPassword('correct horse battery', cost)
    expect(await verifyPassword('correct horse battery', hash, cost)).toBe(true)
    expect(await verifyPassword('correct horse batterz', hash, cost)).toBe(false)
  })
})
