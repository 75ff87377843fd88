import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'

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
