/** What Fastify's `trustProxy` gets from a trusted-proxy setting. */
export type TrustProxyOption = false | string | ((address: string, hop: number) => boolean)

/**
 * Fastify's `trustProxy` from a setting (GATEWAY_TRUST_PROXY, TRUST_PROXY): empty or 0 = trust
 * nobody (the socket address is the client); a whole number N = trust the N hops nearest the
 * service, whatever their addresses (the client is the address N entries from the end of
 * X-Forwarded-For); else addresses, CIDRs or the names loopback, linklocal, uniquelocal.
 *
 * A hop count is passed as a function: Fastify 5.12 accepts a number but then trusts nobody (it
 * cannot check the peer's address). It is only safe when the service cannot be reached but through
 * the counted proxies: a client reaching it directly could name any address.
 */
export function trustProxyOption (value: string): TrustProxyOption {
  const list = value.split(',').map((s) => s.trim()).filter((s) => s !== '')
  if (list.length === 0) return false
  if (list.length === 1 && /^\d+$/.test(list[0]!)) {
    const hops = Number(list[0])
    if (hops === 0) return false
    return (_address: string, hop: number) => hop < hops
  }
  return list.join(',')
}
