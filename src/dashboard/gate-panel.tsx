import type { GateSettings } from '../gate/gate-settings.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import { href, RemoveForm, type View } from './layout.tsx'
import { DataTable } from './data-table.tsx'

/** The lifetimes a user may choose for the gate's cookie, in seconds: an hour to a year. */
export const GATE_TTLS = ['3600', '86400', '604800', '2592000', '7776000', '31536000'] as const

type GatePanelProps = {
  view: View
  csrf: string
  /** The client the site's proxy must name (docs/gate.md). */
  clientId: string
  gate: GateSettings
  /** A refused form of this panel: what to say, and what the user typed. */
  problem?: { message: string; values?: Record<string, string> } | undefined
}

/**
 * The settings page's age gate (docs/gate.md), inside its section: the hosts this client gates, each with a
 * way to stop, a form to gate another, and the age and cookie lifetime. A lifetime set outside the list (the CLI takes any) is
 * offered too, so saving the age alone never changes it.
 */
export function GatePanel({ view, csrf, clientId, gate, problem }: GatePanelProps) {
  const t = dashboardLanguages[view.lang]
  const g = t.gate
  const action = (path: string) => href(view, `/dashboard/settings/${path}`)
  const ttls = GATE_TTLS.includes(String(gate.ttlSeconds) as (typeof GATE_TTLS)[number]) ? [...GATE_TTLS] : [...GATE_TTLS, String(gate.ttlSeconds)].sort((a, b) => Number(a) - Number(b))
  const typed = (name: string, fallback: string) => problem?.values?.[name] ?? fallback
  return (
    <>
      <p safe>{g.intro}</p>
      <p class="small" data-gate-client={clientId} safe>
        {g.proxyNames(clientId)}
      </p>
      {problem && (
        <div role="alert" class="alert" id="gate-problem">
          <p safe>{problem.message}</p>
        </div>
      )}
      {gate.hosts.length === 0 ? (
        <p class="small" safe>
          {g.noHosts}
        </p>
      ) : (
        <DataTable id="gate" caption={g.hostsCaption} kind="gate-hosts">
          <tbody>
            {gate.hosts.map((origin) => (
              <tr>
                <td class="mono" data-gate-host={origin} safe>
                  {origin}
                </td>
                <td class="row-action">
                  <RemoveForm action={action('gate-hosts/remove')} csrf={csrf} name="gate_host" value={origin} label={g.removeHost(origin)} text={t.remove} />
                </td>
              </tr>
            ))}
          </tbody>
        </DataTable>
      )}
      <form method="post" action={action('gate-hosts/add')} class="stack settings-form">
        <input type="hidden" name="csrf" value={csrf} />
        <label for="gate_host" safe>
          {g.hostLabel}
        </label>
        <input
          id="gate_host"
          name="gate_host"
          type="text"
          required
          maxlength="300"
          spellcheck="false"
          autocomplete="off"
          autocapitalize="none"
          placeholder="shop.example"
          value={typed('gate_host', '')}
          aria-describedby={problem ? 'gate-host-help gate-problem' : 'gate-host-help'}
        />
        <p id="gate-host-help" class="small" safe>
          {g.hostHelp}
        </p>
        <div class="actions">
          <button type="submit" safe>
            {g.addHost}
          </button>
        </div>
      </form>
      <form method="post" action={action('gate')} class="stack settings-form">
        <input type="hidden" name="csrf" value={csrf} />
        <label for="gate_age" safe>
          {g.ageLabel}
        </label>
        <input
          id="gate_age"
          name="gate_age"
          type="number"
          min="1"
          max="99"
          step="1"
          inputmode="numeric"
          value={typed('gate_age', gate.ageIsSet ? String(gate.age) : '')}
          aria-describedby="gate-age-help"
        />
        <p id="gate-age-help" class="small" safe>
          {g.ageHelp(gate.age)}
        </p>
        <label for="gate_ttl" safe>
          {g.ttlLabel}
        </label>
        <select id="gate_ttl" name="gate_ttl" aria-describedby="gate-ttl-help">
          {ttls.map((seconds) => (
            <option value={seconds} selected={typed('gate_ttl', String(gate.ttlSeconds)) === seconds} safe>
              {describeLifetime(view.lang, Number(seconds))}
            </option>
          ))}
        </select>
        <p id="gate-ttl-help" class="small" safe>
          {g.ttlHelp}
        </p>
        <div class="actions">
          <button type="submit" safe>
            {g.save}
          </button>
        </div>
      </form>
    </>
  )
}

/** "30 days", "1 hour", "90 Minuten": the largest whole unit, in the page's language and its plural rules. */
function describeLifetime(lang: string, seconds: number): string {
  const [unit, size] = seconds % 86_400 === 0 ? (['day', 86_400] as const) : seconds % 3600 === 0 ? (['hour', 3600] as const) : seconds % 60 === 0 ? (['minute', 60] as const) : (['second', 1] as const)
  return new Intl.NumberFormat(lang, { style: 'unit', unit, unitDisplay: 'long' }).format(seconds / size)
}
