import { createSocket } from 'node:dgram'
import { isIP } from 'node:net'

/** A DNS server on 127.0.0.1 for tests; point a resolver at `server` (`ip:port`). */
export interface TestDns {
  server: string
  /**
   * The A/AAAA answers for a name (lower case): a fixed list, or a function of how many address
   * queries of that name came before (0 for the first), to change answers between queries.
   */
  answers: Map<string, string[] | ((asked: number) => string[])>
  /** Address queries (A and AAAA) received per name. */
  asked: Map<string, number>
  close: () => Promise<void>
}

const A = 1
const AAAA = 28

function ipBytes (address: string): Buffer {
  if (isIP(address) === 4) return Buffer.from(address.split('.').map(Number))
  const [head = '', tail = ''] = address.split('::')
  const groups = (s: string) => s === '' ? [] : s.split(':')
  const h = groups(head)
  const t = groups(tail)
  const all = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t]
  const out = Buffer.alloc(16)
  all.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2))
  return out
}

/**
 * Answers A and AAAA queries from `answers` (TTL 0, so nothing is cached), NXDOMAIN for unknown
 * names, an empty answer for the other family. Enough of RFC 1035 for node's resolver.
 */
export async function testDns (): Promise<TestDns> {
  const socket = createSocket('udp4')
  const dns: TestDns = { server: '', answers: new Map(), asked: new Map(), close: async () => { await new Promise<void>((resolve) => { socket.close(() => { resolve() }) }) } }
  socket.on('message', (msg, rinfo) => {
    if (msg.length < 12) return
    let at = 12
    const labels: string[] = []
    while (at < msg.length && msg[at] !== 0) {
      const len = msg[at]!
      labels.push(msg.subarray(at + 1, at + 1 + len).toString('latin1'))
      at += 1 + len
    }
    at += 1
    const qtype = msg.readUInt16BE(at)
    const question = msg.subarray(12, at + 4)
    const name = labels.join('.').toLowerCase()
    const entry = dns.answers.get(name)
    let records: string[] = []
    if (entry !== undefined && (qtype === A || qtype === AAAA)) {
      const n = dns.asked.get(name) ?? 0
      if (qtype === A) dns.asked.set(name, n + 1)
      records = (typeof entry === 'function' ? entry(n) : entry).filter((ip) => isIP(ip) === (qtype === A ? 4 : 6))
    }
    const header = Buffer.alloc(12)
    header.writeUInt16BE(msg.readUInt16BE(0), 0)
    header.writeUInt16BE(0x8180 | (entry === undefined ? 3 : 0), 2)
    header.writeUInt16BE(1, 4)
    header.writeUInt16BE(records.length, 6)
    const answers = records.map((ip) => {
      const data = ipBytes(ip)
      const rr = Buffer.alloc(12)
      rr.writeUInt16BE(0xc00c, 0)
      rr.writeUInt16BE(qtype, 2)
      rr.writeUInt16BE(1, 4)
      rr.writeUInt32BE(0, 6)
      rr.writeUInt16BE(data.length, 10)
      return Buffer.concat([rr, data])
    })
    socket.send(Buffer.concat([header, question, ...answers]), rinfo.port, rinfo.address)
  })
  await new Promise<void>((resolve) => { socket.bind(0, '127.0.0.1', resolve) })
  dns.server = `127.0.0.1:${socket.address().port}`
  return dns
}
