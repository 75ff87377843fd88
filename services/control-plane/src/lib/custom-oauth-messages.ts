import { defineMessages } from './i18n.js'

/** Messages of the OpenID Connect / OAuth 2.0 providers the super admin adds. */
export const COM = defineMessages({
  notFound: { en: 'This sign-in provider does not exist', zh: '该登录方式不存在' },
  slugTaken: { en: 'The slug {slug} is already used by another provider', zh: '标识 {slug} 已被其他登录方式使用' },
  slugReserved: { en: 'The slug {slug} is reserved for a built-in sign-in method', zh: '标识 {slug} 为内置登录方式保留' },
  endpointRequired: { en: 'The {field} is required for this kind of provider', zh: '此类登录方式必须填写 {field}' },
  endpointInvalid: { en: 'The {field} is not a valid http:// or https:// address', zh: '{field} 不是有效的 http:// 或 https:// 地址' },
  secretRequired: { en: 'The client secret is required', zh: '必须填写 Client Secret' },
  secretUnreadable: {
    en: 'The client secret of {provider} cannot be read (CRYPTO_SECRET changed?); the super admin must enter it again',
    zh: '无法读取 {provider} 的 Client Secret（CRYPTO_SECRET 是否已更换？），请超级管理员重新填写'
  },
  hasBindings: {
    en: '{count} user(s) are bound to this provider, so it cannot be deleted; disable it instead',
    zh: '仍有 {count} 个用户绑定了该登录方式，无法删除；请改为停用'
  },
  created: { en: 'Provider created', zh: '登录方式已创建' },
  updated: { en: 'Provider updated', zh: '登录方式已更新' },
  deleted: { en: 'Provider deleted', zh: '登录方式已删除' },
  discoveryIssuerRequired: { en: 'Enter the issuer URL (or the discovery document URL)', zh: '请填写 Issuer URL（或 Discovery 文档地址）' },
  discoveryFailed: { en: 'Reading the discovery document failed: {detail}', zh: '读取 Discovery 文档失败：{detail}' },
  discoveryIssuerMismatch: {
    en: 'The discovery document names the issuer {found}, not {expected}',
    zh: 'Discovery 文档中的 issuer 为 {found}，而不是 {expected}'
  },
  idTokenSignature: {
    en: '{provider} sign-in failed: the ID token\'s signature does not match the provider\'s published keys',
    zh: '{provider} 登录失败：ID Token 的签名与该提供方公布的密钥不符'
  },
  idTokenAudience: {
    en: '{provider} sign-in failed: the ID token was issued to another client',
    zh: '{provider} 登录失败：ID Token 签发给了其他客户端'
  },
  idTokenNonce: {
    en: '{provider} sign-in failed: the ID token belongs to another sign-in (nonce mismatch)',
    zh: '{provider} 登录失败：ID Token 属于另一次登录（nonce 不符）'
  },
  idTokenIssuer: {
    en: '{provider} sign-in failed: the answer comes from another issuer',
    zh: '{provider} 登录失败：响应来自其他签发方'
  },
  idTokenExpired: {
    en: '{provider} sign-in failed: the ID token has expired or is not yet valid',
    zh: '{provider} 登录失败：ID Token 已过期或尚未生效'
  },
  idTokenInvalid: {
    en: '{provider} sign-in failed: the ID token is invalid ({detail})',
    zh: '{provider} 登录失败：ID Token 无效（{detail}）'
  },
  userinfoMismatch: {
    en: '{provider} sign-in failed: the userinfo answer is about another account',
    zh: '{provider} 登录失败：用户信息响应属于另一个账户'
  },
  noSubject: {
    en: '{provider} sign-in failed: the answer has no account id in {field}',
    zh: '{provider} 登录失败：响应的 {field} 中没有账户标识'
  },
  unbound: { en: 'Unbound', zh: '已解除绑定' },
  notBound: { en: 'Your account is not bound to this provider', zh: '你的账户未绑定该登录方式' },
  lastSignIn: {
    en: 'This is the only way to sign in to your account; set a password or bind another sign-in method first',
    zh: '这是你账户唯一的登录方式；请先设置密码或绑定其他登录方式'
  }
})
