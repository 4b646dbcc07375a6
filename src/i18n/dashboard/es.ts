import type { DashboardMessages } from '../dashboard-messages.ts'
import { en } from './en.ts'

// Placeholder: English until this language's catalog is written.
export const es: DashboardMessages = { ...en }
