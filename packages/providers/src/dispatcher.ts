import { Agent, type Dispatcher, ProxyAgent } from 'undici'

/** Pool settings for every upstream origin: kept alive between requests, no Nagle delay. */
const POOL = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 300_000, connect: { noDelay: true } }

/** Direct calls: one connection pool per upstream origin, shared by every channel without a proxy. */
const direct = new Agent(POOL)

/** Proxies in use, by URL; bounded, the oldest closed first (a few per deployment in practice). */
const proxied = new Map<string, Dispatcher>()
const MAX_PROXIES = 1000

function proxyAgent (proxyUrl: string): Dispatcher {
  const url = new URL(proxyUrl)
  // Host names go to a SOCKS proxy to resolve (socks5h's meaning) either way.
  if (url.protocol === 'socks5h:') url.protocol = 'socks5:'
  if (!['http:', 'https:', 'socks5:'].includes(url.protocol)) throw new Error(`unsupported proxy scheme ${url.protocol}`)
  // Credentials in the URL are sent to the proxy. Plain-HTTP upstreams behind an HTTP proxy are
  // forwarded (absolute URI), HTTPS ones tunnelled with CONNECT: what every HTTP proxy accepts.
  return new ProxyAgent({ uri: url.href, proxyTunnel: false, keepAliveTimeout: POOL.keepAliveTimeout, keepAliveMaxTimeout: POOL.keepAliveMaxTimeout })
}

/**
 * The dispatcher for a channel's upstream calls: the shared direct pools when `proxyUrl` is empty,
 * else the pools of that proxy (http, https, socks5 or socks5h URL, credentials allowed), made
 * once per distinct URL. Throws on a URL that is not one of those.
 */
export function upstreamDispatcher (proxyUrl: string | undefined): Dispatcher {
  if (proxyUrl === undefined || proxyUrl === '') return direct
  let d = proxied.get(proxyUrl)
  if (d === undefined) {
    d = proxyAgent(proxyUrl)
    if (proxied.size >= MAX_PROXIES) {
      const [oldest, agent] = proxied.entries().next().value as [string, Dispatcher]
      proxied.delete(oldest)
      void agent.close().catch(() => {})
    }
    proxied.set(proxyUrl, d)
  }
  return d
}
