import { defineMessages } from './i18n.js'

/** Relay token management (docs/domain.md). */
export const TM = defineMessages({
  tokenNotFound: { en: 'Token not found', zh: '令牌不存在' },
  nameRequired: { en: 'The token name cannot be empty', zh: '令牌名称不能为空' },
  nameTooLong: { en: 'The token name may be at most {max} characters', zh: '令牌名称最多 {max} 个字符' },
  countRange: { en: 'The batch count must be an integer from 1 to {max}', zh: '批量创建数量必须是 1 到 {max} 之间的整数' },
  tooManyTokens: { en: 'You can hold at most {max} tokens; delete some before creating more', zh: '每个用户最多拥有 {max} 个令牌，请先删除部分令牌' },
  expiryInPast: { en: 'The expiry time must be in the future, or -1 for never', zh: '过期时间必须晚于当前时间，或为 -1（永不过期）' },
  badAllowIp: { en: 'Invalid IP address or CIDR range in the IP whitelist: {entry}', zh: 'IP 白名单中存在无效的 IP 地址或 CIDR 网段：{entry}' },
  groupNotUsable: { en: 'You cannot use group {group}', zh: '无权使用分组 {group}' },
  statusOneOrTwo: { en: 'The status can only be set to 1 (enabled) or 2 (disabled)', zh: '状态只能设置为 1（启用）或 2（禁用）' },
  tokenExpired: { en: 'This token has expired; change its expiry first', zh: '令牌已过期，请先修改过期时间' },
  tokenExhausted: { en: 'This token\'s quota is exhausted; add quota first', zh: '令牌额度已用尽，请先增加额度' },
  tokenCreated: { en: 'Token created', zh: '令牌创建成功' },
  tokenUpdated: { en: 'Token updated', zh: '令牌更新成功' },
  tokenDeleted: { en: 'Token deleted', zh: '令牌已删除' },
  keyMissing: { en: 'No API key provided. Send it as "Authorization: Bearer sk-...".', zh: '未提供令牌，请在 Authorization 头中以 Bearer sk-... 的形式提供' },
  keyInvalid: { en: 'Invalid API key', zh: '无效的令牌' }
})
