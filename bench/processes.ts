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
