// The SQL migrations in drizzle/, imported as text so that a compiled binary carries them. A new file
// from `bun run db:generate` must be added here; test/db/database.test.ts fails until it is.
import journal from '../../drizzle/meta/_journal.json' with { type: 'json' }
import m0000 from '../../drizzle/0000_init.sql' with { type: 'text' }
import m0001 from '../../drizzle/0001_pages.sql' with { type: 'text' }
import m0002 from '../../drizzle/0002_face_check.sql' with { type: 'text' }
import m0003 from '../../drizzle/0003_client_home_url.sql' with { type: 'text' }
import m0004 from '../../drizzle/0004_face_challenge.sql' with { type: 'text' }
import m0005 from '../../drizzle/0005_credentials_passkeys.sql' with { type: 'text' }
import m0006 from '../../drizzle/0006_rate_limits.sql' with { type: 'text' }
import m0007 from '../../drizzle/0007_integrators.sql' with { type: 'text' }
import m0008 from '../../drizzle/0008_webhooks.sql' with { type: 'text' }
import m0009 from '../../drizzle/0009_dashboard.sql' with { type: 'text' }
import m0010 from '../../drizzle/0010_client_secret_overlap.sql' with { type: 'text' }
import m0011 from '../../drizzle/0011_audit_search.sql' with { type: 'text' }
import m0012 from '../../drizzle/0012_dashboard_passkeys.sql' with { type: 'text' }
import m0013 from '../../drizzle/0013_dashboard_passkey_origin.sql' with { type: 'text' }
import m0014 from '../../drizzle/0014_credential_answer_keys.sql' with { type: 'text' }
import m0015 from '../../drizzle/0015_trust_sources.sql' with { type: 'text' }
import m0016 from '../../drizzle/0016_client_methods.sql' with { type: 'text' }
import m0017 from '../../drizzle/0017_gate.sql' with { type: 'text' }
import m0018 from '../../drizzle/0018_webhook_deliveries_by_endpoint.sql' with { type: 'text' }
import m0019 from '../../drizzle/0019_client_branding.sql' with { type: 'text' }
import m0020 from '../../drizzle/0020_gate_claims.sql' with { type: 'text' }
import m0021 from '../../drizzle/0021_month_verifications.sql' with { type: 'text' }
import m0022 from '../../drizzle/0022_usage_shards.sql' with { type: 'text' }

export const migrationJournal = journal

/** Migration SQL by its journal tag. */
export const migrationFiles: Record<string, string> = {
  '0000_init': m0000,
  '0001_pages': m0001,
  '0002_face_check': m0002,
  '0003_client_home_url': m0003,
  '0004_face_challenge': m0004,
  '0005_credentials_passkeys': m0005,
  '0006_rate_limits': m0006,
  '0007_integrators': m0007,
  '0008_webhooks': m0008,
  '0009_dashboard': m0009,
  '0010_client_secret_overlap': m0010,
  '0011_audit_search': m0011,
  '0012_dashboard_passkeys': m0012,
  '0013_dashboard_passkey_origin': m0013,
  '0014_credential_answer_keys': m0014,
  '0015_trust_sources': m0015,
  '0016_client_methods': m0016,
  '0017_gate': m0017,
  '0018_webhook_deliveries_by_endpoint': m0018,
  '0019_client_branding': m0019,
  '0020_gate_claims': m0020,
  '0021_month_verifications': m0021,
  '0022_usage_shards': m0022,
}
