type SecurityRequirements = Record<string, string[]>[]

/**
 * OpenAPI `security` per operation, with the schemes declared in src/app.tsx. Routes that read a form
 * body also take client_secret_post (RFC 6749 §2.3.1), which OpenAPI has no scheme for: their
 * descriptions say so.
 */
export const security = {
  client: [{ clientBasic: [] }] as SecurityRequirements,
  optionalClient: [{}, { clientBasic: [] }] as SecurityRequirements,
  metrics: [{ metricsBearer: [] }] as SecurityRequirements,
  none: [] as SecurityRequirements,
}
