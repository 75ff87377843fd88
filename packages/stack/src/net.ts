import { connect } from 'node:net'

/** True when something accepts TCP connections on host:port within `timeoutMs`. */
export async function isListening (host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect({ host, port })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

export async function sleep (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}
