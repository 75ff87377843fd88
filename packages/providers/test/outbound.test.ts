import t from 'tap'
import { Outbound, type OutboundRefused, parseAddress } from '../src/net/outbound.js'

/** Why `check` was refused; undefined when it passed. */
const reasonOf = async (check: Promise<unknown>) => await check.then(() => undefined, (err: OutboundRefused) => err.reason)

t.test('addresses in every spelling are judged as the host they reach', async (t) => {
  const admin = new Outbound()
  const strict = new Outbound({ publicOnly: true })
  const cases: Array<[string, string | undefined, string | undefined]> = [
    // host, default mode, public-only mode
    ['127.0.0.1', undefined, 'private'],
    ['[::ffff:7f00:1]', undefined, 'private'],
    ['::ffff:127.0.0.1', undefined, 'private'],
    ['::127.0.0.1', undefined, 'private'],
    ['::1', undefined, 'private'],
    ['0.0.0.0', undefined, 'private'],
    ['10.0.0.5', undefined, 'private'],
    ['172.31.255.255', undefined, 'private'],
    ['192.168.1.1', undefined, 'private'],
    ['100.64.0.1', undefined, 'private'],
    ['fd12:3456::1', undefined, 'private'],
    ['169.254.169.254', 'metadata', 'metadata'],
    ['[::ffff:169.254.169.254]', 'metadata', 'metadata'],
    ['64:ff9b::a9fe:a9fe', 'metadata', 'metadata'],
    ['2002:a9fe:a9fe::1', 'metadata', 'metadata'],
    ['100.100.100.200', 'metadata', 'metadata'],
    ['fd00:ec2::254', 'metadata', 'metadata'],
    ['fe80::1', 'metadata', 'metadata'],
    ['metadata.google.internal', 'metadata', 'metadata'],
    ['METADATA.google.internal.', 'metadata', 'metadata'],
    ['8.8.8.8', undefined, undefined],
    ['2606:4700::1111', undefined, undefined],
    ['api.openai.com', undefined, undefined]
  ]
  for (const [host, loose, tight] of cases) {
    t.equal(admin.staticRefusal(host)?.reason, loose, `${host} by default`)
    t.equal(strict.staticRefusal(host)?.reason, tight, `${host} public-only`)
    t.equal(admin.staticRefusal(host, 'user')?.reason, tight, `${host} supplied by a user`)
  }
  t.equal(parseAddress('1.2.3'), undefined, 'not an address')
  t.equal(parseAddress('example.com'), undefined)
})

t.test('the allow-list takes CIDRs, addresses and host names', async (t) => {
  const o = new Outbound({ publicOnly: true, allow: ['10.1.0.0/16', ' 169.254.169.254 ', 'ollama.lan', '.corp.test', 'fd00::/8'] })
  t.equal(o.staticRefusal('10.1.2.3'), undefined)
  t.equal(o.staticRefusal('10.2.0.1')?.reason, 'private')
  t.equal(o.staticRefusal('169.254.169.254'), undefined)
  t.equal(o.staticRefusal('169.254.169.253')?.reason, 'metadata')
  t.equal(o.refusalOf('ollama.lan', '192.168.1.9'), undefined, 'a listed name, whatever it resolves to')
  t.equal(o.refusalOf('gpu.corp.test', '10.9.9.9'), undefined, 'a listed domain')
  t.equal(o.refusalOf('corp.test.evil.example', '10.9.9.9')?.reason, 'private', 'not a suffix match on the wrong side')
  t.equal(o.staticRefusal('fd00:ec2::254'), undefined, 'a listed IPv6 range')
})

t.test('URLs: schemes and proxies', async (t) => {
  const o = new Outbound()
  t.equal(await reasonOf(o.checkUrl('file:///etc/passwd')), 'scheme')
  t.equal(await reasonOf(o.checkUrl('gopher://127.0.0.1:6379/_x')), 'scheme')
  t.equal(await reasonOf(o.checkUrl('http://0x7f000001', 'user')), 'private')
  t.equal(await reasonOf(o.checkUrl('http://2130706433', 'user')), 'private')
  t.equal(await reasonOf(o.checkUrl('http://127.0.0.1:11434')), undefined, 'a local Ollama by default')
  t.equal(await reasonOf(o.checkProxyUrl('ftp://proxy.example.com')), 'scheme')
  t.equal(await reasonOf(o.checkProxyUrl('http://169.254.169.254:3128')), 'metadata')
  t.equal(await reasonOf(o.checkProxyUrl('socks5h://127.0.0.1:1080')), undefined)
  t.equal(await reasonOf((async () => o.dispatcher('http://169.254.169.254:3128'))()), 'metadata', 'no dispatcher for a metadata proxy')
  await o.close()
})
