import { readdirSync, readFileSync } from 'node:fs'

/** The resident memory of a process and its children, in MiB: the most any one of them holds. */
export function peakRssMiB(rootPid: number): number {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)])
    } catch {}
  }
  let most = 0
  const visit = (pid: number) => {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
      most = Math.max(most, kb / 1024)
    } catch {}
    for (const child of children.get(pid) ?? []) visit(child)
  }
  visit(rootPid)
  return most
}

/** Bun's flags in package.json's `start` script, so that a bench runs the server as `bun start` does. */
export function startFlags(): string[] {
  const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>
  return scripts.start!.split(/\s+/).filter((word) => word.startsWith('--'))
}

/** Waits for the server's /readyz (the face models loaded, where the face check is on): a minute at most. */
export async function waitForReady(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await fetch(`${url}/readyz`).then((r) => r.ok, () => false)) return
    await Bun.sleep(100)
  }
  throw new Error(`${url} did not become ready`)
}

/** The 1-, 5- and 15-minute load averages, as /proc/loadavg has them. */
export async function loadAverage(): Promise<string> {
  return (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')
}
