import { randomInt } from 'node:crypto'

/** A turn of the head, in the visitor's own terms: "left" is their left. */
export type Turn = 'left' | 'right'

/**
 * The orders a challenge may ask for. Two or three alternating turns: short enough for a phone in a
 * hurry, and a recording made for one order fails the three others.
 */
export const CHALLENGE_ORDERS: readonly (readonly Turn[])[] = [
  ['left', 'right'],
  ['right', 'left'],
  ['left', 'right', 'left'],
  ['right', 'left', 'right'],
]

/** How long a challenge may be answered after it is issued: enough to do it, too short to stage a replay. */
export const CHALLENGE_LIFETIME_MS = 2 * 60_000

/** Picks the order of turns with a cryptographic random number (a test may pass a fixed picker). */
export function pickChallengeTurns(pick: (count: number) => number = randomInt): Turn[] {
  return [...CHALLENGE_ORDERS[pick(CHALLENGE_ORDERS.length)]!]
}

/** Turns as stored and sent to the page: "left,right". */
export const formatTurns = (turns: readonly Turn[]) => turns.join(',')

export function parseTurns(value: string | null | undefined): Turn[] | undefined {
  if (!value) return undefined
  const turns = value.split(',')
  return turns.every((turn): turn is Turn => turn === 'left' || turn === 'right') ? turns : undefined
}
