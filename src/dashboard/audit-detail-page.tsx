import type { AuditLog } from '../audit/audit-logs.ts'
import { formatInstant } from '../i18n/format.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import { DashboardLayout, href, type Account, type View } from './layout.tsx'

/** One verification: every column we keep, in words, and what we deliberately do not keep. */
export function AuditDetailPage({ view, account, row }: { view: View; account: Account; row: AuditLog }) {
  const t = dashboardLanguages[view.lang]
  const f = t.fields
  return (
    <DashboardLayout view={view} title={t.verification} account={account} switchPath={`/dashboard/audit/${row.transactionId}`}>
      <p>
        <a href={href(view, '/dashboard/audit')} safe>
          {t.backToAudit}
        </a>
      </p>
      <h1 safe>{t.verification}</h1>
      <h2 safe>{t.kept}</h2>
      <p safe>{t.keptIntro}</p>
      <dl class="record">
        <dt safe>{f.transactionId}</dt>
        <dd class="mono" safe>{row.transactionId}</dd>
        <dt safe>{f.createdAt}</dt>
        <dd>
          <time datetime={row.createdAt.toISOString()} safe>
            {formatInstant(view.lang, row.createdAt)}
          </time>
        </dd>
        <dt safe>{f.clientId}</dt>
        <dd class="mono" safe>{row.clientId}</dd>
        <dt safe>{f.subject}</dt>
        <dd>
          <span class="mono" safe>{row.subject}</span>
          <br />
          <span class="small" safe>{t.subjectExplained}</span>
        </dd>
        <dt safe>{f.methodClass}</dt>
        <dd safe>{t.classes[row.methodClass]}</dd>
        <dt safe>{f.level}</dt>
        <dd safe>{t.levels[row.verificationLevel]}</dd>
        <dt safe>{f.ageOver}</dt>
        <dd safe>{t.ageOverValue(row.ageOver)}</dd>
        <dt safe>{f.method}</dt>
        <dd class="mono" safe>{row.method ?? t.none}</dd>
        <dt safe>{f.ageBuffer}</dt>
        <dd safe>{row.ageBuffer === null ? t.none : t.ageBufferValue(row.ageBuffer)}</dd>
        <dt safe>{f.revokedAt}</dt>
        <dd>
          {row.revokedAt ? (
            <>
              <time datetime={row.revokedAt.toISOString()} safe>
                {formatInstant(view.lang, row.revokedAt)}
              </time>
              <br />
              <span class="small" safe>{t.revokedExplained}</span>
            </>
          ) : (
            <span safe>{t.notRevoked}</span>
          )}
        </dd>
      </dl>
      <h2 safe>{t.notKept}</h2>
      <ul>
        {t.notKeptItems.map((item) => (
          <li safe>{item}</li>
        ))}
      </ul>
    </DashboardLayout>
  )
}
