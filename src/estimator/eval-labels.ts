import { basename } from 'node:path'

/** One labelled photo of an evaluation set: its path (relative to the set's folder) and the person's age. */
export type LabelledPhoto = { path: string; age: number }

export const GENDERS = ['male', 'female'] as const
/** UTKFace's "race" field, in its authors' words and order. */
export const GROUPS = ['white', 'black', 'asian', 'indian', 'other'] as const
export type Gender = (typeof GENDERS)[number]
export type Group = (typeof GROUPS)[number]

/** Reads `path,age` lines (a header line is skipped; paths relative to the dataset folder). */
export function parseLabels(csv: string): LabelledPhoto[] {
  const rows: LabelledPhoto[] = []
  for (const [index, line] of csv.split(/\r?\n/).entries()) {
    const trimmed = line.trim()
    if (!trimmed || trimmed.startsWith('#')) continue
    const comma = trimmed.lastIndexOf(',')
    const path = trimmed.slice(0, comma).trim().replace(/^"|"$/g, '')
    const age = Number(trimmed.slice(comma + 1).trim())
    if (comma <= 0 || !Number.isFinite(age)) {
      if (index === 0) continue
      throw new Error(`line ${index + 1}: expected "path,age", got "${trimmed}"`)
    }
    rows.push({ path, age })
  }
  return rows
}

const UTKFACE_NAME = /^(\d+)_([01])_([0-4])_/

/**
 * The gender and group that UTKFace writes into its file names (`age_gender_race_datetime.jpg`:
 * gender 0 male, 1 female; race 0 white, 1 black, 2 asian, 3 indian, 4 other), or null for any other name.
 * They let the evaluation report how evenly the errors fall; they never enter a decision.
 */
export function parseUtkFaceFields(path: string): { gender: Gender; group: Group } | null {
  const match = UTKFACE_NAME.exec(basename(path))
  if (!match) return null
  return { gender: GENDERS[Number(match[2])]!, group: GROUPS[Number(match[3])]! }
}
