import { defineMessages } from './i18n.js'

/** Messages of OAuth sign-in and account binding (ARCHITECTURE.md "Console API conventions"). */
export const OM = defineMessages({
  notEnabled: {
    en: 'The administrator has not enabled sign-in and registration through {provider}',
    zh: '管理员未开启通过 {provider} 登录以及注册'
  },
  notConfigured: {
    en: '{provider} sign-in is not configured; please contact the administrator',
    zh: '{provider} 登录尚未配置，请联系管理员'
  },
  stateInvalid: {
    en: 'The sign-in request is invalid or has expired; please start again',
    zh: '登录请求无效或已过期，请重新发起登录'
  },
  codeMissing: { en: 'The authorization code is missing', zh: '缺少授权码' },
  alreadyBound: {
    en: 'This {provider} account is already bound to another user',
    zh: '该 {provider} 账户已被绑定'
  },
  registerDisabled: { en: 'The administrator has closed new registrations', zh: '管理员关闭了新用户注册' },
  signUpClosed: {
    en: 'New accounts cannot be created through {provider}; sign in with an existing account and bind {provider} in the personal settings',
    zh: '不能通过 {provider} 注册新账户；请用已有账户登录，再在个人设置中绑定 {provider}'
  },
  providerRefused: { en: '{provider} sign-in failed: {detail}', zh: '{provider} 登录失败：{detail}' },
  providerUnavailable: {
    en: '{provider} could not be reached; please try again later',
    zh: '无法连接 {provider}，请稍后再试'
  },
  providerBadAnswer: {
    en: '{provider} gave an unexpected answer; please try again later',
    zh: '{provider} 返回了无法识别的响应，请稍后再试'
  },
  linuxdoInactive: { en: 'This LinuxDO account is not active', zh: '该 LinuxDO 账户未激活' },
  busy: {
    en: 'Another sign-in with this account is in progress; please try again',
    zh: '该账户正在进行另一个登录操作，请稍后重试'
  },
  telegramInvalid: { en: 'The Telegram sign-in data is invalid', zh: 'Telegram 登录数据无效' },
  telegramExpired: {
    en: 'The Telegram sign-in data has expired; please sign in again',
    zh: 'Telegram 登录数据已过期，请重新登录'
  },
  telegramUsed: {
    en: 'This Telegram sign-in has already been used; please sign in again',
    zh: '该 Telegram 登录数据已被使用，请重新登录'
  }
})
