import { type ChildProcess, fork, spawn } from 'node:child_process'
import { createWriteStream, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

/** A child process the bench started and must stop. */
export interface Child {
  name: string
  proc: ChildProcess
  pid: number
  /** Where its stdout and stderr go. */
  logFile: string
}

/** A free TCP port on 127.0.0.1 (free when asked; the child binds it right after). */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      srv.close(() => { resolve(typeof addr === 'object' && addr !== null ? addr.port : 0) })
    })
  })
}

/**
 * Every process the run starts. They share the bench's process group, so a terminal Ctrl-C
 * reaches them too; `stopAll` then waits for them (SIGTERM, SIGKILL after a grace period).
 */
export class Children {
  readonly #children: Child[] = []
  readonly #logDir: string
  readonly #node: string

  /** `node`: the binary every child runs on ('' for the bench's own). */
  constructor (logDir: string, node = '') {
    this.#logDir = logDir
    this.#node = node === '' ? process.execPath : node
  }

  #track (name: string, proc: ChildProcess): Child {
    if (proc.pid === undefined) throw new Error(`${name} did not start`)
    const logFile = join(this.#logDir, `${name}.log`)
    const out = createWriteStream(logFile)
    proc.stdout?.pipe(out)
    proc.stderr?.pipe(out)
    const child = { name, proc, pid: proc.pid, logFile }
    this.#children.push(child)
    proc.once('exit', () => {
      const i = this.#children.indexOf(child)
      if (i >= 0) this.#children.splice(i, 1)
    })
    return child
  }

  /** A Node script (a built service) with exactly `env` as its environment. */
  spawnNode (name: string, script: string, env: Record<string, string>, execArgv: string[] = []): Child {
    const proc = spawn(this.#node, [...execArgv, script], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    return this.#track(name, proc)
  }

  /** One of the bench's own TypeScript programs, with an IPC channel. */
  forkTs (name: string, script: string, args: string[] = []): Child {
    const proc = fork(script, args, { execPath: this.#node, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
    return this.#track(name, proc)
  }

  pidOf (name: string): number {
    const child = this.#children.find((c) => c.name === name)
    if (child === undefined) throw new Error(`no running child named ${name}`)
    return child.pid
  }

  alive (name: string): boolean {
    return this.#children.some((c) => c.name === name && c.proc.exitCode === null && c.proc.signalCode === null)
  }

  /** The last lines a child wrote, for an error message. */
  static tail (child: Child, lines = 30): string {
    try {
      return readFileSync(child.logFile, 'utf8').split('\n').slice(-lines).join('\n')
    } catch {
      return ''
    }
  }

  /** Stops one child: SIGTERM, then SIGKILL after `graceMs`. */
  static async stop (child: Child, graceMs: number): Promise<void> {
    const { proc } = child
    if (proc.exitCode !== null || proc.signalCode !== null) return
    const exited = new Promise((resolve) => proc.once('exit', resolve))
    proc.kill('SIGTERM')
    const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)])
    if (!done) {
      proc.kill('SIGKILL')
      await exited
    }
  }

  /** Stops every child still running, in the given order first (names), the rest after. */
  async stopAll (order: string[], graceMs: number): Promise<void> {
    const rank = (c: Child) => { const i = order.indexOf(c.name); return i < 0 ? order.length : i }
    for (const child of [...this.#children].sort((a, b) => rank(a) - rank(b))) await Children.stop(child, graceMs)
  }

  /** SIGKILL to everything at once (a second Ctrl-C). */
  killAll (): void {
    for (const c of this.#children) c.proc.kill('SIGKILL')
  }
}

/** Polls `url` until it answers 2xx, or throws after `timeoutMs` (or when `alive()` turns false). */
export async function waitReady (url: string, timeoutMs: number, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`process behind ${url} exited`)
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) })
      if (res.ok) return
      last = `${res.status} ${await res.text()}`
    } catch (err) {
      last = (err as Error).message
    }
    await sleep(200)
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms: ${last}`)
}

