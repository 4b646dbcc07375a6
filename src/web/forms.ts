import { t } from 'elysia'
import { readStrictBody } from '../lib/strict-request.ts'

/** The `?lang=` switch every page takes. */
export const LangQuery = t.Object({ lang: t.Optional(t.String({ maxLength: 8 })) })

/** A form post: its CSRF token, and other fields each bounded. */
export const CsrfForm = t.Object({ csrf: t.String({ maxLength: 128 }) }, { additionalProperties: t.String({ maxLength: 1024 }) })

/** Form posts are read strictly: one content type, a size bound, no field twice. */
export const readForm = ({ request }: { request: Request }) => readStrictBody(request, ['form'])
