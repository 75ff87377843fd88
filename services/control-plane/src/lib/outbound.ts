import { outboundRefusal, type Outbound, type RefusalReason, type TargetKind } from '@modelgate/providers'
import { fail } from './errors.js'
import { defineMessages, type Msg } from './i18n.js'

/** Why the outbound guard (SSRF) refused an address, in the caller's language. */
export const OBM = defineMessages({
  scheme: { en: 'The address {host} is refused: only http:// and https:// addresses are allowed', zh: '地址 {host} 被拒绝：只允许 http:// 与 https:// 地址' },
  proxyScheme: { en: 'The proxy {host} is refused: only http://, https://, socks5:// and socks5h:// proxies are allowed', zh: '代理 {host} 被拒绝：只允许 http://、https://、socks5://、socks5h:// 代理' },
  metadata: { en: 'The address {host} is refused: it is a cloud metadata or link-local address (the operator can allow it with OUTBOUND_ALLOW)', zh: '地址 {host} 被拒绝：这是云元数据或链路本地地址（运维可通过 OUTBOUND_ALLOW 放行）' },
  private: { en: 'The address {host} is refused: it is a private, loopback or reserved address and this server only connects to public ones (OUTBOUND_PUBLIC_ONLY; OUTBOUND_ALLOW lists exceptions)', zh: '地址 {host} 被拒绝：这是私有、回环或保留地址，本服务只连接公网地址（OUTBOUND_PUBLIC_ONLY；例外见 OUTBOUND_ALLOW）' },
  unresolved: { en: 'The address {host} is refused: its name has no allowed address', zh: '地址 {host} 被拒绝：该域名没有可用的地址' }
})

const WHY: Record<RefusalReason, Msg> = { scheme: OBM.scheme, metadata: OBM.metadata, private: OBM.private, unresolved: OBM.unresolved }

/**
 * Checks a URL (or, with `host`, a bare host name) before it is saved or used: the scheme and
 * every address its host resolves to now. A refusal becomes a console failure naming the host
 * and why. The check at connect time still applies whenever the address is used.
 */
export async function checkOutbound (outbound: Outbound, target: { url: string } | { host: string }, opts: { kind?: TargetKind, proxy?: boolean } = {}): Promise<void> {
  try {
    if ('host' in target) await outbound.checkHost(target.host, opts.kind ?? 'admin')
    else if (opts.proxy === true) await outbound.checkProxyUrl(target.url)
    else await outbound.checkUrl(target.url, opts.kind ?? 'admin')
  } catch (err) {
    const refusal = outboundRefusal(err)
    if (refusal === undefined) throw err
    throw fail(refusal.reason === 'scheme' && opts.proxy === true ? OBM.proxyScheme : WHY[refusal.reason], { host: refusal.host })
  }
}
