import { once } from 'node:events'
import { createServer as createHttpServer, request as httpRequest } from 'node:http'
import { type AddressInfo, connect, createServer as createTcpServer, type Server, type Socket } from 'node:net'
import type { Teardown } from './resources.js'

/** A proxy on 127.0.0.1 for tests, and what went through it. */
export interface TestProxy {
  /** The proxy's URL, with credentials when it asks for them. */
  url: string
  /** Each upstream reached, as `host:port` (CONNECT and SOCKS) or the absolute URL (forwarded). */
  targets: string[]
  /** Requests refused for missing or wrong credentials. */
  refused: number
}

/** Listens on a free 127.0.0.1 port; at teardown cuts open connections and closes. The port. */
export async function listen (t: Teardown, server: Server): Promise<number> {
  const sockets = new Set<Socket>()
  server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
  return (server.address() as AddressInfo).port
}

/** Joins two sockets both ways, closing each when the other closes. */
function splice (a: Socket, b: Socket): void {
  a.pipe(b).on('error', () => a.destroy())
  b.pipe(a).on('error', () => b.destroy())
  a.on('error', () => b.destroy()).on('close', () => b.destroy())
  b.on('error', () => a.destroy()).on('close', () => a.destroy())
}

/**
 * A real HTTP proxy: absolute-URI requests forwarded, CONNECT tunnelled. With `auth`
 * ('user:pass'), requests without that Proxy-Authorization get 407.
 */
export async function httpTestProxy (t: Teardown, auth?: string): Promise<TestProxy> {
  const state = { targets: [] as string[], refused: 0 }
  const expected = auth === undefined ? undefined : `Basic ${Buffer.from(auth).toString('base64')}`
  const allowed = (header: string | undefined) => expected === undefined || header === expected
  const server = createHttpServer((req, res) => {
    if (!allowed(req.headers['proxy-authorization'])) {
      state.refused++
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end()
      return
    }
    state.targets.push(req.url ?? '')
    const target = new URL(req.url ?? '')
    const headers = { ...req.headers }
    delete headers['proxy-authorization']
    delete headers['proxy-connection']
    const out = httpRequest({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers)
      up.pipe(res)
    })
    out.on('error', () => { res.destroy() })
    req.pipe(out)
  })
  server.on('connect', (req, client: Socket, head: Buffer) => {
    if (!allowed(req.headers['proxy-authorization'])) {
      state.refused++
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n')
      return
    }
    state.targets.push(req.url ?? '')
    const [host, port] = (req.url ?? '').split(':')
    const up = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length > 0) up.write(head)
      splice(client, up)
    })
    up.on('error', () => { client.destroy() })
  })
  const port = await listen(t, server)
  return {
    url: `http://${auth === undefined ? '' : `${auth}@`}127.0.0.1:${port}`,
    get targets () { return state.targets },
    get refused () { return state.refused }
  }
}

/** Reads exactly `n` bytes from a paused socket. */
async function readBytes (socket: Socket, n: number): Promise<Buffer> {
  for (;;) {
    const chunk = socket.read(n) as Buffer | null
    if (chunk !== null) return chunk
    if (socket.destroyed || socket.readableEnded) throw new Error('closed')
    await Promise.race([once(socket, 'readable'), once(socket, 'close')])
  }
}

/**
 * A real SOCKS5 proxy (RFC 1928 CONNECT; RFC 1929 user/password when `auth` is 'user:pass',
 * else no authentication). Domain names are resolved here, as socks5h asks.
 */
export async function socksTestProxy (t: Teardown, auth?: string): Promise<TestProxy> {
  const state = { targets: [] as string[], refused: 0 }
  const server = createTcpServer((client) => {
    client.on('error', () => {})
    void (async () => {
      const [version, methods] = await readBytes(client, 2)
      const offered = await readBytes(client, methods!)
      if (version !== 5) return client.destroy()
      const method = auth === undefined ? 0x00 : 0x02
      if (!offered.includes(method)) {
        state.refused++
        return client.end(Buffer.from([5, 0xff]))
      }
      client.write(Buffer.from([5, method]))
      if (auth !== undefined) {
        const [, userLength] = await readBytes(client, 2)
        const user = (await readBytes(client, userLength!)).toString()
        const [passLength] = await readBytes(client, 1)
        const pass = (await readBytes(client, passLength!)).toString()
        if (`${user}:${pass}` !== auth) {
          state.refused++
          return client.end(Buffer.from([1, 1]))
        }
        client.write(Buffer.from([1, 0]))
      }
      const [, command, , type] = await readBytes(client, 4)
      let host: string
      if (type === 1) host = [...await readBytes(client, 4)].join('.')
      else if (type === 3) host = (await readBytes(client, (await readBytes(client, 1))[0]!)).toString()
      else return client.end(Buffer.from([5, 8, 0, 1, 0, 0, 0, 0, 0, 0]))
      const port = (await readBytes(client, 2)).readUInt16BE(0)
      if (command !== 1) return client.end(Buffer.from([5, 7, 0, 1, 0, 0, 0, 0, 0, 0]))
      state.targets.push(`${host}:${port}`)
      const up = connect(port, host, () => {
        client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]))
        splice(client, up)
      })
      up.on('error', () => { client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])) })
    })().catch(() => client.destroy())
  })
  server.on('connection', (s: Socket) => { s.pause() })
  const port = await listen(t, server)
  return {
    url: `socks5://${auth === undefined ? '' : `${auth}@`}127.0.0.1:${port}`,
    get targets () { return state.targets },
    get refused () { return state.refused }
  }
}
