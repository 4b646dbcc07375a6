import type { Messages } from '../messages.ts'
import { en } from './en.ts'

// Placeholder: English until this language's catalog is written.
export const fr: Messages = { ...en }
