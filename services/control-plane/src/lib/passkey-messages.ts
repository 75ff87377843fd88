import { defineMessages } from './i18n.js'

/** Passkeys (WebAuthn), issue 29. */
export const PM = defineMessages({
  disabled: { en: 'Passkeys are not enabled on this site', zh: '本站未启用通行密钥（Passkey）' },
  rpIdInvalid: {
    en: 'Passkeys need a domain name as relying party ID, and "{rpId}" is not one: open the console by its domain name (or localhost), or have the administrator set PasskeyRPID',
    zh: '通行密钥需要以域名作为依赖方 ID，而“{rpId}”不是域名：请通过域名（或 localhost）访问控制台，或请管理员设置 PasskeyRPID'
  },
  originOutsideRpId: {
    en: 'The passkey origin {origin} does not belong to the relying party ID {rpId}: the administrator must correct PasskeyOrigins or PasskeyRPID',
    zh: '通行密钥来源 {origin} 不属于依赖方 ID {rpId}：请管理员修正 PasskeyOrigins 或 PasskeyRPID'
  },
  foreignOrigin: {
    en: 'Passkeys are not accepted from {origin}: it is not one of this site\'s allowed origins ({allowed})',
    zh: '不接受来自 {origin} 的通行密钥：它不在本站允许的来源（{allowed}）之中'
  },
  wrongRpId: {
    en: 'This passkey answer was made for another site (its relying party ID is not {rpId})',
    zh: '此通行密钥应答属于其他站点（其依赖方 ID 不是 {rpId}）'
  },
  challengeExpired: {
    en: 'The passkey request has expired or was already used; try again',
    zh: '通行密钥请求已过期或已被使用，请重试'
  },
  responseInvalid: { en: 'The passkey answer could not be verified', zh: '无法验证通行密钥的应答' },
  userVerificationMissing: {
    en: 'The authenticator did not verify you (PIN, fingerprint or face); passkeys here need it',
    zh: '认证器未验证您的身份（PIN、指纹或面容），本站的通行密钥需要此验证'
  },
  counterRegressed: {
    en: 'This passkey\'s signature counter did not increase: the authenticator may have been cloned, so it was refused',
    zh: '此通行密钥的签名计数器没有增加，认证器可能已被复制，已拒绝'
  },
  unknownCredential: {
    en: 'This passkey is not registered here (it may have been removed); sign in another way',
    zh: '此通行密钥未在本站注册（可能已被删除），请使用其他方式登录'
  },
  notYours: { en: 'This passkey does not belong to your account', zh: '此通行密钥不属于您的账户' },
  none: { en: 'Your account has no passkey', zh: '您的账户没有通行密钥' },
  userHasNone: { en: 'This user has no passkey', zh: '该用户没有通行密钥' },
  notFound: { en: 'This passkey no longer exists; refresh the list', zh: '该通行密钥已不存在，请刷新列表' },
  duplicate: { en: 'This passkey is already registered', zh: '此通行密钥已注册过' },
  limit: { en: 'An account may hold at most {max} passkeys; remove one first', zh: '每个账户最多 {max} 个通行密钥，请先删除一个' },
  registered: { en: 'Passkey added', zh: '通行密钥已添加' },
  renamed: { en: 'Passkey renamed', zh: '通行密钥已重命名' },
  deleted: { en: 'Passkey removed', zh: '通行密钥已删除' },
  deletedAll: { en: 'All your passkeys were removed', zh: '您的全部通行密钥已删除' },
  resetDone: { en: 'All passkeys of this user were removed and the user signed out everywhere', zh: '已删除该用户的全部通行密钥，并使其在所有设备上退出登录' },
  defaultName: { en: 'Passkey', zh: '通行密钥' }
})
