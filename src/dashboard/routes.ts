import { html } from '@elysiajs/html'
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { auditRoutes } from './audit-routes.tsx'
import { authRoutes } from './auth-routes.tsx'
import { createDashboardContext } from './context.ts'
import { passkeyRoutes } from './passkey-routes.tsx'
import { passwordResetRoutes } from './password-reset-routes.tsx'
import { settingsRoutes } from './settings-routes.tsx'
import { usageRoutes } from './usage-routes.tsx'
import { webhooksRoutes } from './webhooks-routes.tsx'

/**
 * The client dashboard under /dashboard: sign-in for the users an operator created (`ofage users create`),
 * or with a passkey they added, "Forgot password?" (by email when SMTP_URL is set), the audit log of their
 * client, its usage this month, its webhooks, and its integration settings. Server-rendered pages under the
 * hosted page's strict CSP.
 */
export function dashboardRoutes(deps: AppDeps) {
  const context = createDashboardContext(deps)
  return new Elysia({ name: 'dashboard-routes' })
    .use(html({ autoDoctype: true }))
    .use(authRoutes(deps, context))
    .use(passwordResetRoutes(deps, context))
    .use(auditRoutes(deps, context))
    .use(usageRoutes(deps, context))
    .use(webhooksRoutes(deps, context))
    .use(settingsRoutes(deps, context))
    .use(passkeyRoutes(deps, context))
}
