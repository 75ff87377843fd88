import { defineMessages } from './i18n.js'

/** Two-factor sign-in and secure verification (issue 29). */
export const TM = defineMessages({
  verificationRequired: {
    en: 'This operation needs a fresh verification: confirm your password or a two-factor code first',
    zh: '此操作需要安全验证：请先验证密码或两步验证码'
  },
  verified: { en: 'Verified', zh: '验证成功' },
  verifyWrongPassword: { en: 'Wrong password', zh: '密码错误' },
  verifyMethodUnavailable: { en: 'This verification method is not available for your account', zh: '您的账户无法使用此验证方式' },
  codeRequired: { en: 'Enter the verification code', zh: '请输入验证码' },
  codeInvalid: { en: 'Invalid or already used verification code', zh: '验证码错误或已被使用' },
  notEnabled: { en: 'Two-factor authentication is not enabled', zh: '尚未启用两步验证' },
  alreadyEnabled: { en: 'Two-factor authentication is already enabled', zh: '两步验证已启用' },
  setupFirst: { en: 'Set up two-factor authentication first', zh: '请先设置两步验证' },
  enabled: { en: 'Two-factor authentication enabled', zh: '两步验证已启用' },
  disabled: { en: 'Two-factor authentication disabled', zh: '两步验证已关闭' },
  backupCodesRegenerated: { en: 'New backup codes generated; the old ones no longer work', zh: '已生成新的备用码，旧备用码已失效' },
  resetDone: { en: 'Two-factor authentication reset for this user', zh: '已重置该用户的两步验证' },
  flowExpired: { en: 'The sign-in step has expired; sign in with your password again', zh: '登录验证已过期，请重新输入密码登录' },
  loginNeeds2fa: { en: 'Enter the code from your authenticator app', zh: '请输入身份验证器中的验证码' },
  setupRequired: {
    en: 'Administrators must set up two-factor authentication before using the console',
    zh: '管理员必须先设置两步验证才能使用控制台'
  }
})
