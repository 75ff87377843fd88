import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { SERVICE_NODE_FLAGS } from '@modelgate/config'
import { sleep } from './net.js'

/** One supervised service process. */
export interface ServiceSpec {
  name: string
  /** Script run with this Node binary, with the services' Node flags (SERVICE_NODE_FLAGS). */
  script: string
  env: Record<string, string>
}

interface Running {
  spec: ServiceSpec
  child?: ChildProcess
  restarts: number[]
  stopping: boolean
}

const COLORS = ['\x1b[36m', '\x1b[35m', '\x1b[33m', '\x1b[32m']
const RESET = '\x1b[0m'

/**
 * Runs services as child processes, each in its own process group (so a terminal Ctrl-C reaches
 * only the supervisor, which then stops them in order). A service that exits unexpectedly is
 * restarted after a growing pause; more than 5 crashes in a minute stops the whole stack.
 */
export class Supervisor {
  readonly #services = new Map<string, Running>()
  readonly #onGiveUp: (name: string) => void
  readonly #color: boolean

  constructor (opts: { onGiveUp: (name: string) => void, color?: boolean }) {
    this.#onGiveUp = opts.onGiveUp
    this.#color = opts.color ?? process.stdout.isTTY
  }

  #prefix (name: string): string {
    const index = [...this.#services.keys()].indexOf(name)
    const label = name.padEnd(15)
    return this.#color ? `${COLORS[index % COLORS.length]}${label}${RESET}| ` : `${label}| `
  }

  #spawn (running: Running): void {
    const { spec } = running
    const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, spec.script], {
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true
    })
    running.child = child
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => process.stdout.write(this.#prefix(spec.name) + line + '\n'))
    }
    child.once('exit', (code, signal) => {
      running.child = undefined
      if (running.stopping) return
      const now = Date.now()
      running.restarts = running.restarts.filter((t) => now - t < 60_000)
      running.restarts.push(now)
      if (running.restarts.length > 5) {
        process.stdout.write(this.#prefix(spec.name) + `exited (${signal ?? code}) 6 times within a minute; giving up\n`)
        this.#onGiveUp(spec.name)
        return
      }
      const delay = 500 * 2 ** (running.restarts.length - 1)
      process.stdout.write(this.#prefix(spec.name) + `exited (${signal ?? code}); restarting in ${delay} ms\n`)
      setTimeout(() => { if (!running.stopping) this.#spawn(running) }, delay)
    })
  }

  start (spec: ServiceSpec): void {
    const running: Running = { spec, restarts: [], stopping: false }
    this.#services.set(spec.name, running)
    this.#spawn(running)
  }

  /** Restarts one service (SIGTERM, wait, start again). */
  async restart (name: string): Promise<void> {
    const running = this.#services.get(name)
    if (running === undefined) throw new Error(`no service named ${name}`)
    running.stopping = true
    await this.#stopOne(running, 30_000)
    running.stopping = false
    running.restarts = []
    this.#spawn(running)
  }

  get names (): string[] {
    return [...this.#services.keys()]
  }

  async #stopOne (running: Running, graceMs: number): Promise<void> {
    const child = running.child
    if (child === undefined || child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)])
    if (!done) {
      child.kill('SIGKILL')
      await exited
    }
  }

  /** SIGKILLs every service at once (a forced stop). */
  killAll (): void {
    for (const r of this.#services.values()) {
      r.stopping = true
      r.child?.kill('SIGKILL')
    }
  }

  /** Stops services in the given order (others after), each with SIGTERM then SIGKILL after graceMs. */
  async stopAll (order: string[], graceMs: number): Promise<void> {
    for (const r of this.#services.values()) r.stopping = true
    const rest = [...this.#services.keys()].filter((n) => !order.includes(n))
    for (const name of [...order, ...rest]) {
      const running = this.#services.get(name)
      if (running !== undefined) await this.#stopOne(running, graceMs)
    }
  }
}
