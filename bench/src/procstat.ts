import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
})()

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name may hold spaces and parentheses: fields are counted after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // utime and stime are fields 14 and 15 of proc(5); fields[0] is field 3.
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK
}

/** Resident set size now and its peak since start (or since the last `resetPeakRss`), in MB. */
export function memoryMb (pid: number): { rss: number, peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0)
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 }
}

/**
 * Resets the kernel's peak-RSS counter (VmHWM) to the current RSS, so a scenario's peak is its
 * own. Needs write access to /proc/<pid>/clear_refs (our own children); false when refused.
 */
export function resetPeakRss (pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/** What one process used over a scenario. */
export interface ProcessUsage {
  /** Average CPU over the scenario, percent of one core. */
  cpuPercent: number
  /** Highest resident set size seen, MB. */
  peakRssMb: number
  /** Resident set size at the end, MB. */
  endRssMb: number
}

/**
 * Measures a process between `start()` and `stop()`: CPU from /proc/<pid>/stat, peak RSS from
 * VmHWM (reset at start when allowed) and from VmRSS samples every 100 ms, whichever is higher.
 */
export class UsageMeter {
  readonly #pid: number
  #cpu0 = 0
  #t0 = 0
  #peak = 0
  #timer: NodeJS.Timeout | undefined
  #hwmReset = false

  constructor (pid: number) {
    this.#pid = pid
  }

  start (): void {
    this.#hwmReset = resetPeakRss(this.#pid)
    this.#cpu0 = cpuSeconds(this.#pid)
    this.#t0 = performance.now()
    this.#peak = memoryMb(this.#pid).rss
    this.#timer = setInterval(() => {
      try {
        this.#peak = Math.max(this.#peak, memoryMb(this.#pid).rss)
      } catch {
        // the process exited; stop() reports what was seen
      }
    }, 100)
    this.#timer.unref()
  }

  stop (): ProcessUsage {
    clearInterval(this.#timer)
    const seconds = (performance.now() - this.#t0) / 1000
    const cpu = cpuSeconds(this.#pid) - this.#cpu0
    const mem = memoryMb(this.#pid)
    const peak = Math.max(this.#peak, mem.rss, this.#hwmReset ? mem.peak : 0)
    return { cpuPercent: seconds > 0 ? (cpu / seconds) * 100 : 0, peakRssMb: peak, endRssMb: mem.rss }
  }
}

/**
 * Connections the kernel dropped because a listening socket's accept queue was full (all
 * processes on the machine). A client then sees a stalled connect or, later, ECONNRESET.
 */
export function listenOverflows (): number {
  const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'))
  const names = lines[0]?.split(/\s+/) ?? []
  const values = lines[1]?.split(/\s+/) ?? []
  const i = names.indexOf('ListenOverflows')
  return i < 0 ? 0 : Number(values[i] ?? 0)
}

/** Processes whose command name (/proc/<pid>/comm) is `name`, e.g. every Postgres backend. */
export function pidsNamed (name: string): number[] {
  const out: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) out.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return out
}

/** CPU seconds the whole machine spent busy so far (every state of /proc/stat but idle and iowait). */
export function machineBusySeconds (): number {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number)
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields
  return (user + nice + system + irq + softirq + steal) / CLK_TCK
}

/**
 * Where the machine's CPU went over a scenario: the CPU of named groups of processes, in percent
 * of one core, plus the machine's total busy time, so what no group explains shows as the rest. A
 * group is a list of pids (those present at start; one that exits meanwhile takes its share with
 * it) or a process name, listed again at the end so that processes started during the scenario
 * (Postgres' backends for new pool connections) count with all they used.
 */
export class CpuSplit {
  readonly #groups: Record<string, number[] | { name: string }>
  readonly #listed = new Map<string, number[]>()
  #start = new Map<number, number>()
  #machine0 = 0
  #t0 = 0

  constructor (groups: Record<string, number[] | { name: string }>) {
    this.#groups = groups
  }

  start (): void {
    for (const [group, pids] of Object.entries(this.#groups)) this.#listed.set(group, Array.isArray(pids) ? pids : pidsNamed(pids.name))
    for (const pid of [...this.#listed.values()].flat()) {
      try {
        this.#start.set(pid, cpuSeconds(pid))
      } catch {
        // gone already
      }
    }
    this.#machine0 = machineBusySeconds()
    this.#t0 = performance.now()
  }

  /** Percent of one core per group, and `machine` for the whole machine. */
  stop (): Record<string, number> {
    const seconds = (performance.now() - this.#t0) / 1000
    const out: Record<string, number> = {}
    for (const [name, group] of Object.entries(this.#groups)) {
      const atStart = this.#listed.get(name) ?? []
      const started = Array.isArray(group) ? [] : pidsNamed(group.name).filter((pid) => !atStart.includes(pid))
      let cpu = 0
      for (const pid of [...atStart, ...started]) {
        const before = this.#start.get(pid) ?? (started.includes(pid) ? 0 : undefined)
        if (before === undefined) continue
        try {
          cpu += cpuSeconds(pid) - before
        } catch {
          // exited during the scenario
        }
      }
      out[name] = seconds > 0 ? (cpu / seconds) * 100 : 0
    }
    out['machine'] = seconds > 0 ? ((machineBusySeconds() - this.#machine0) / seconds) * 100 : 0
    return out
  }
}
