import { lookup as systemLookup, Resolver } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { Agent, buildConnector, type Dispatcher, fetch, ProxyAgent, type RequestInit, type Response, Socks5ProxyAgent } from 'undici'

/**
 * The one guard of every outbound connection the product makes (SSRF, SECURITY.md): relay and
 * probe calls to channels, their proxies, realtime websockets, OAuth, Turnstile and SMTP. The
 * address a socket actually connects to is checked when the connection opens (a DNS answer that
 * changes after a URL was saved changes nothing), once per connection, never per request.
 *
 * Targets set by admins (channel base URLs and proxies, options) may be private or loopback
 * (Ollama on 127.0.0.1, a model server on the LAN) unless `publicOnly`; cloud metadata addresses
 * are refused unless listed in `allow`. Targets that users supply are refused when private too.
 */
interface OutboundPolicy {
  /** Refuse private, loopback and other non-public addresses for admin-set targets too (OUTBOUND_PUBLIC_ONLY); default false. */
  publicOnly?: boolean
  /**
   * Exceptions (OUTBOUND_ALLOW): CIDRs (`10.0.0.0/8`, `fd00::/8`), single addresses, or host
   * names (exact; `.example.lan` for the name and every name under it). A listed target is
   * allowed whatever it is: a metadata address, a private one in public-only mode, or one a user gave.
   */
  allow?: readonly string[]
  /**
   * DNS servers (`ip` or `ip:port`, OUTBOUND_DNS_SERVERS) that resolve outbound host names instead
   * of the system resolver (getaddrinfo, /etc/hosts); empty: the system resolver.
   */
  dnsServers?: readonly string[]
}

/** Who chose the target: an admin (channels, options, OAuth endpoints) or a user (a URL in a request). */
export type TargetKind = 'admin' | 'user'

/** Why a target was refused. */
export type RefusalReason = 'scheme' | 'metadata' | 'private' | 'unresolved'

const REASON_TEXT: Record<RefusalReason, string> = {
  scheme: 'only http:// and https:// addresses are allowed',
  metadata: 'it is a cloud metadata or link-local address (OUTBOUND_ALLOW lists exceptions)',
  private: 'it is a private, loopback or reserved address (OUTBOUND_ALLOW lists exceptions)',
  unresolved: 'its name has no allowed address'
}

/** An outbound connection or URL the guard refused. The message names the host, never an answer. */
export class OutboundRefused extends Error {
  readonly code = 'ERR_OUTBOUND_REFUSED'
  readonly reason: RefusalReason
  readonly host: string

  constructor (host: string, reason: RefusalReason) {
    super(`refused to connect to ${host}: ${REASON_TEXT[reason]}`)
    this.name = 'OutboundRefused'
    this.host = host
    this.reason = reason
  }
}

/** The refusal behind `err` (itself, or a `cause` of it, as fetch and ws wrap errors), if any. */
export function outboundRefusal (err: unknown): OutboundRefused | undefined {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof OutboundRefused) return e
  }
  return undefined
}

// --- Addresses ------------------------------------------------------------------------------

/** An address as a 128-bit number; IPv4 as its IPv4-mapped IPv6 form (::ffff:a.b.c.d). */
type Addr = bigint
const V4_MAPPED = 0xffffn << 32n

function parseV4 (text: string): bigint | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  let n = 0n
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined
    n = (n << 8n) | BigInt(p)
  }
  return n
}

function parseV6 (text: string): bigint | undefined {
  let s = text.toLowerCase()
  const zone = s.indexOf('%')
  if (zone >= 0) s = s.slice(0, zone)
  // A trailing dotted quad (::ffff:127.0.0.1) is the last two groups.
  const lastColon = s.lastIndexOf(':')
  if (s.includes('.', lastColon)) {
    const v4 = parseV4(s.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    s = `${s.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`
  }
  const halves = s.split('::')
  if (halves.length > 2) return undefined
  const groups = (h: string | undefined): bigint[] | undefined => {
    if (h === undefined || h === '') return []
    const out: bigint[] = []
    for (const g of h.split(':')) {
      if (!/^[0-9a-f]{1,4}$/.test(g)) return undefined
      out.push(BigInt(`0x${g}`))
    }
    return out
  }
  const head = groups(halves[0])
  const rest = groups(halves[1])
  if (head === undefined || rest === undefined) return undefined
  const known = head.length + rest.length
  if (halves.length === 1 ? known !== 8 : known > 7) return undefined
  const all = [...head, ...Array<bigint>(8 - known).fill(0n), ...rest]
  return all.reduce((n, g) => (n << 16n) | g, 0n)
}

/** The address of an IP literal (brackets allowed), or undefined for a host name. */
export function parseAddress (host: string): Addr | undefined {
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  const family = isIP(h)
  if (family === 4) return V4_MAPPED | parseV4(h)!
  if (family !== 6) return undefined
  const v6 = parseV6(h)
  if (v6 === undefined) return undefined
  // IPv4 inside IPv6 reaches the IPv4 host: NAT64 (64:ff9b::/96) and the deprecated compatible
  // form (::a.b.c.d, but not :: and ::1) are judged as that IPv4 address.
  if (v6 >> 32n === 0x64ff9bn << 64n) return V4_MAPPED | (v6 & 0xffffffffn)
  if (v6 >> 32n === 0n && v6 > 1n) return V4_MAPPED | v6
  // 6to4 (2002:a.b.c.d::/48) as its IPv4 address.
  if (v6 >> 112n === 0x2002n) return V4_MAPPED | ((v6 >> 80n) & 0xffffffffn)
  return v6
}

interface Cidr { base: bigint, bits: number }

function parseCidr (text: string): Cidr | undefined {
  const [ip, len, extra] = text.split('/')
  if (ip === undefined || extra !== undefined) return undefined
  const addr = parseAddress(ip)
  if (addr === undefined) return undefined
  const v4 = isIP(ip) === 4
  const max = v4 ? 32 : 128
  const n = len === undefined ? max : Number(len)
  if (!Number.isInteger(n) || n < 0 || n > max || (len !== undefined && !/^\d+$/.test(len))) return undefined
  const bits = v4 ? 96 + n : n
  const mask = bits === 0 ? 0n : ((1n << BigInt(bits)) - 1n) << BigInt(128 - bits)
  return { base: addr & mask, bits }
}

function inCidr (addr: Addr, c: Cidr): boolean {
  if (c.bits === 0) return true
  return (addr >> BigInt(128 - c.bits)) === (c.base >> BigInt(128 - c.bits))
}

const cidrs = (list: string[]): Cidr[] => list.map((c) => parseCidr(c)!)

/** Cloud metadata services and link-local ranges they live in: refused unless allowed. */
const METADATA = cidrs(['169.254.0.0/16', '100.100.100.200/32', 'fd00:ec2::254/128', 'fe80::/10'])
/** Host names of metadata services, refused whatever they resolve to. */
const METADATA_NAMES: ReadonlySet<string> = new Set(['metadata.google.internal', 'metadata.goog', 'metadata.azure.internal', 'instance-data.ec2.internal'])
/** Everything not globally reachable (RFC 6890 and successors): private, loopback, shared, reserved. */
const NON_PUBLIC = cidrs([
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '172.16.0.0/12', '192.0.0.0/24', '192.0.2.0/24',
  '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4',
  '::/128', '::1/128', '100::/64', '2001::/32', '2001:db8::/32', 'fc00::/7', 'fec0::/10', 'ff00::/8'
])

/** Host names as compared: lower case, no trailing dot, no brackets. */
function hostKey (host: string): string {
  let h = host.toLowerCase()
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1)
  return h.endsWith('.') ? h.slice(0, -1) : h
}

// --- The guard ------------------------------------------------------------------------------

/** Pool settings for every upstream origin: kept alive between requests, no Nagle delay. */
const POOL = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 300_000 }
/** Proxies kept per guard, by URL; the oldest closed first (a few per deployment in practice). */
const MAX_PROXIES = 1000

type LookupAddress = { address: string, family: number }

/**
 * The guard with its connection pools: one per service instance, from its config
 * (`outboundPolicyFrom`). Close it with the service.
 */
export class Outbound {
  readonly publicOnly: boolean
  readonly #allowNets: Cidr[] = []
  readonly #allowNames = new Set<string>()
  readonly #allowSuffixes: string[] = []
  readonly #resolver: Resolver | undefined
  readonly #direct: Agent
  readonly #proxied = new Map<string, Dispatcher>()
  /** Verdicts on proxied targets' host names (the proxy resolves them, so only the name is judged). */
  readonly #hostVerdicts = new Map<string, OutboundRefused | null>()

  constructor (policy: OutboundPolicy = {}) {
    this.publicOnly = policy.publicOnly ?? false
    for (const raw of policy.allow ?? []) {
      const entry = raw.trim()
      if (entry === '') continue
      const net = parseCidr(entry)
      if (net !== undefined) this.#allowNets.push(net)
      else if (entry.startsWith('.')) this.#allowSuffixes.push(hostKey(entry))
      else this.#allowNames.add(hostKey(entry))
    }
    if (policy.dnsServers !== undefined && policy.dnsServers.length > 0) {
      this.#resolver = new Resolver({ timeout: 5000, tries: 2 })
      this.#resolver.setServers([...policy.dnsServers])
    }
    this.#direct = new Agent({ ...POOL, connect: this.#connector({ noDelay: true }) })
  }

  /** True when the host name itself is listed in the allow-list. */
  #nameAllowed (host: string): boolean {
    if (this.#allowNames.has(host)) return true
    return this.#allowSuffixes.some((s) => host === s.slice(1) || host.endsWith(s))
  }

  /** Why `address` may not be connected to for a target `host` of `kind`; undefined when it may. */
  refusalOf (host: string, address: string, kind: TargetKind = 'admin'): OutboundRefused | undefined {
    const name = hostKey(host)
    if (this.#nameAllowed(name)) return undefined
    if (METADATA_NAMES.has(name)) return new OutboundRefused(host, 'metadata')
    const addr = parseAddress(address)
    if (addr === undefined) return new OutboundRefused(host, 'unresolved')
    if (this.#allowNets.some((c) => inCidr(addr, c))) return undefined
    if (METADATA.some((c) => inCidr(addr, c))) return new OutboundRefused(host, 'metadata')
    if ((this.publicOnly || kind === 'user') && NON_PUBLIC.some((c) => inCidr(addr, c))) return new OutboundRefused(host, 'private')
    return undefined
  }

  /**
   * What can be said of a host without resolving it: an IP literal judged as an address, a
   * metadata name refused; undefined for other names (judged when they resolve).
   */
  staticRefusal (host: string, kind: TargetKind = 'admin'): OutboundRefused | undefined {
    const name = hostKey(host)
    if (this.#nameAllowed(name)) return undefined
    if (METADATA_NAMES.has(name)) return new OutboundRefused(host, 'metadata')
    return parseAddress(name) === undefined ? undefined : this.refusalOf(host, name, kind)
  }

  /** Every address of `host` (an IP literal is its own), in the resolver's order. */
  async #resolve (host: string, family = 0): Promise<LookupAddress[]> {
    const h = hostKey(host)
    const literal = isIP(h)
    if (literal !== 0) return [{ address: h, family: literal }]
    const resolver = this.#resolver
    if (resolver === undefined) {
      return await new Promise((resolve, reject) => {
        systemLookup(h, { all: true, family }, (err, addresses) => { if (err !== null) reject(err); else resolve(addresses) })
      })
    }
    const ask = async (v: 4 | 6): Promise<LookupAddress[]> => await new Promise((resolve, reject) => {
      const done = (err: NodeJS.ErrnoException | null, list: string[]) => {
        if (err === null) resolve(list.map((address) => ({ address, family: v })))
        else if (err.code === 'ENODATA' || err.code === 'ENOTFOUND') resolve([])
        else reject(err)
      }
      if (v === 4) resolver.resolve4(h, done)
      else resolver.resolve6(h, done)
    })
    const found = [...(family === 6 ? [] : await ask(4)), ...(family === 4 ? [] : await ask(6))]
    if (found.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${h}`), { code: 'ENOTFOUND', hostname: h })
    return found
  }

  /**
   * The lookup sockets use (net.connect's `lookup`): resolves, then keeps only the addresses the
   * policy allows, so the socket can only connect to one of them; none left is a refusal.
   */
  lookupFor (kind: TargetKind = 'admin'): LookupFunction {
    return (hostname, options, callback) => {
      const family = typeof options.family === 'number' ? options.family : 0
      this.#resolve(hostname, family).then((addresses) => {
        let refusal: OutboundRefused | undefined
        const allowed = addresses.filter((a) => {
          const r = this.refusalOf(hostname, a.address, kind)
          refusal ??= r
          return r === undefined
        })
        if (allowed.length === 0) {
          callback(refusal ?? new OutboundRefused(hostname, 'unresolved'), '', 0)
          return
        }
        if (options.all === true) callback(null, allowed)
        else callback(null, allowed[0]!.address, allowed[0]!.family)
      }, (err: NodeJS.ErrnoException) => { callback(err, '', 0) })
    }
  }

  /** An undici connector that judges IP literals itself (net.connect skips the lookup for them) and names by the lookup. */
  #connector (options: { noDelay?: boolean }, kind: TargetKind = 'admin'): buildConnector.connector {
    const connect = buildConnector({ ...options, lookup: this.lookupFor(kind) } as buildConnector.BuildOptions)
    return (opts, callback) => {
      const refusal = this.staticRefusal(opts.hostname, kind)
      if (refusal !== undefined) {
        // Asynchronously, as a socket error would be.
        queueMicrotask(() => { callback(refusal, null) })
        return
      }
      connect(opts, callback)
    }
  }

  /**
   * Checks a URL an admin or a user gave before it is saved or used: the scheme (`schemes`,
   * default http and https), and every address its host resolves to now. A name that does not
   * resolve yet passes (the check at connect time still applies). Throws {@link OutboundRefused}.
   */
  async checkUrl (url: string, kind: TargetKind = 'admin', schemes: readonly string[] = ['http:', 'https:']): Promise<void> {
    let u: URL
    try {
      u = new URL(url)
    } catch {
      throw new OutboundRefused(url, 'scheme')
    }
    if (!schemes.includes(u.protocol)) throw new OutboundRefused(`${u.protocol}//${u.host}`, 'scheme')
    await this.checkHost(u.hostname, kind)
  }

  /** {@link checkUrl} for a bare host name or address (an SMTP server). */
  async checkHost (host: string, kind: TargetKind = 'admin'): Promise<void> {
    const refusal = this.staticRefusal(host, kind)
    if (refusal !== undefined) throw refusal
    let addresses: LookupAddress[]
    try {
      addresses = await this.#resolve(host)
    } catch {
      return
    }
    for (const a of addresses) {
      const r = this.refusalOf(host, a.address, kind)
      if (r !== undefined) throw r
    }
  }

  /**
   * A resolved, allowed address of `host` to connect to (for clients that connect by themselves,
   * such as SMTP): connecting to it, not to the name, leaves no second resolution to rebind.
   */
  async resolveAllowed (host: string, kind: TargetKind = 'admin'): Promise<string> {
    return await new Promise((resolve, reject) => {
      this.lookupFor(kind)(host, { all: false }, (err, address) => {
        if (err !== null) reject(err)
        else resolve(address as string)
      })
    })
  }

  /**
   * The dispatcher for a channel's upstream calls: the shared direct pools when `proxyUrl` is
   * empty, else the pools of that proxy (http, https, socks5 or socks5h URL, credentials
   * allowed), made once per distinct URL. Throws on a URL that is not one of those, and on a
   * proxy the policy refuses. Connections to the proxy are checked like direct ones; targets
   * behind a proxy are judged by their name (the proxy resolves it).
   */
  dispatcher (proxyUrl?: string): Dispatcher {
    if (proxyUrl === undefined || proxyUrl === '') return this.#direct
    let d = this.#proxied.get(proxyUrl)
    if (d === undefined) {
      d = this.#proxyAgent(proxyUrl)
      if (this.#proxied.size >= MAX_PROXIES) {
        const [oldest, agent] = this.#proxied.entries().next().value as [string, Dispatcher]
        this.#proxied.delete(oldest)
        void agent.close().catch(() => {})
      }
      this.#proxied.set(proxyUrl, d)
    }
    return d
  }

  /** Throws unless `proxyUrl` is an http, https, socks5 or socks5h URL whose host the policy allows. */
  async checkProxyUrl (proxyUrl: string): Promise<void> {
    await this.checkUrl(proxyUrl, 'admin', ['http:', 'https:', 'socks5:', 'socks5h:'])
  }

  #proxyAgent (proxyUrl: string): Dispatcher {
    const url = new URL(proxyUrl)
    // Host names go to a SOCKS proxy to resolve (socks5h's meaning) either way.
    if (url.protocol === 'socks5h:') url.protocol = 'socks5:'
    if (!['http:', 'https:', 'socks5:'].includes(url.protocol)) throw new Error(`unsupported proxy scheme ${url.protocol}`)
    const refusal = this.staticRefusal(url.hostname)
    if (refusal !== undefined) throw refusal
    // Credentials in the URL are sent to the proxy. Plain-HTTP upstreams behind an HTTP proxy are
    // forwarded (absolute URI), HTTPS ones tunnelled with CONNECT: what every HTTP proxy accepts.
    // Either way the connection to the proxy goes through the guard's connector or lookup.
    const agent: Dispatcher = url.protocol === 'socks5:' ? new Socks5ProxyAgent(url.href, { connect: this.#connector({ noDelay: true }) }) : new ProxyAgent({
      uri: url.href,
      proxyTunnel: false,
      keepAliveTimeout: POOL.keepAliveTimeout,
      keepAliveMaxTimeout: POOL.keepAliveMaxTimeout,
      // The connection to the proxy resolves through the guard.
      proxyTls: { lookup: this.lookupFor('admin') } as buildConnector.BuildOptions
    })
    // Targets are judged before anything is sent to the proxy.
    return agent.compose((dispatch) => (opts, handler) => {
      const origin = typeof opts.origin === 'string' ? new URL(opts.origin) : opts.origin
      const refusal = origin === undefined ? undefined : this.#proxiedTargetRefusal(origin.hostname)
      if (refusal === undefined) return dispatch(opts, handler)
      // Handlers reach interceptors in undici's controller form.
      queueMicrotask(() => { (handler as { onResponseError?: (controller: null, err: Error) => void }).onResponseError?.(null, refusal) })
      return true
    })
  }

  #proxiedTargetRefusal (host: string): OutboundRefused | undefined {
    let v = this.#hostVerdicts.get(host)
    if (v === undefined) {
      v = this.staticRefusal(host) ?? null
      if (this.#hostVerdicts.size >= 10_000) this.#hostVerdicts.clear()
      this.#hostVerdicts.set(host, v)
    }
    return v ?? undefined
  }

  /**
   * fetch through the guard for one-off calls (OAuth, Turnstile, WeChat): redirects are never
   * followed (`redirect` other than 'manual' becomes 'error'), so headers and credentials reach
   * only the host of `url`. `kind` 'user' refuses private targets too.
   */
  async fetch (url: string, init: RequestInit = {}, kind: TargetKind = 'admin'): Promise<Response> {
    const refusal = await this.checkUrl(url, kind).then(() => undefined, (err: unknown) => err)
    if (refusal !== undefined) throw new TypeError('fetch failed', { cause: refusal })
    const dispatcher = kind === 'admin' ? this.#direct : this.#userAgent()
    return await fetch(url, { ...init, redirect: init.redirect === 'manual' ? 'manual' : 'error', dispatcher })
  }

  #user: Agent | undefined
  #userAgent (): Agent {
    this.#user ??= new Agent({ ...POOL, connect: this.#connector({ noDelay: true }, 'user') })
    return this.#user
  }

  /** Closes every pool. */
  async close (): Promise<void> {
    const all: Dispatcher[] = [this.#direct, ...this.#proxied.values(), ...(this.#user === undefined ? [] : [this.#user])]
    this.#proxied.clear()
    await Promise.all(all.map(async (d) => { await d.close().catch(() => {}) }))
  }
}

/** The guard with the default policy: metadata refused, private allowed for admin-set targets. */
export const defaultOutbound = new Outbound()
