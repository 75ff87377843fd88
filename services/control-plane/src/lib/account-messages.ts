import { defineMessages } from './i18n.js'

/** Registration, e-mail codes, password reset and e-mail binding (docs/domain.md). */
export const AM = defineMessages({
  registerDisabled: { en: 'Registration has been disabled by the administrator', zh: '管理员关闭了新用户注册' },
  passwordRegisterDisabled: {
    en: 'Password registration has been disabled by the administrator; please register with a third-party account',
    zh: '管理员关闭了通过密码进行注册，请使用第三方账户验证的形式进行注册'
  },
  passwordsDiffer: { en: 'The two passwords differ', zh: '两次输入的密码不一致' },
  emailAndCodeRequired: {
    en: 'Email verification is on: enter the email address and the verification code',
    zh: '管理员开启了邮箱验证，请输入邮箱地址和验证码'
  },
  registered: { en: 'Registered', zh: '注册成功' },
  emailInvalid: { en: 'Invalid email address', zh: '无效的邮箱地址' },
  emailDomainNotAllowed: {
    en: 'The administrator allows only whitelisted email domains, and {domain} is not on the list',
    zh: '管理员启用了邮箱域名白名单，您的邮箱域名 {domain} 不在白名单中'
  },
  emailAliasNotAllowed: {
    en: 'The administrator does not allow email aliases: the address must not contain "+"',
    zh: '管理员已启用邮箱地址别名限制，邮箱地址不能包含“+”'
  },
  emailInUse: { en: 'Email already in use', zh: '邮箱地址已被占用' },
  emailNotRegistered: { en: 'Email not registered', zh: '该邮箱地址未注册' },
  resendWait: { en: 'Please wait {seconds} seconds before sending again', zh: '请 {seconds} 秒后再重新发送' },
  mailHourlyCap: { en: 'Too many mails requested; try again in {minutes} minutes', zh: '发送邮件过于频繁，请 {minutes} 分钟后再试' },
  codeSent: { en: 'Verification code sent', zh: '验证码发送成功' },
  codeInvalid: { en: 'Verification code wrong or expired', zh: '验证码错误或已过期' },
  resetMailSent: { en: 'Password reset mail sent; please check your inbox', zh: '重置邮件发送成功，请检查邮箱' },
  resetInvalid: { en: 'Reset link invalid or expired', zh: '重置链接非法或已过期' },
  passwordReset: { en: 'Password reset; sign in with the new password and change it', zh: '密码已重置，请使用新密码登录并及时修改' },
  emailBound: { en: 'Email bound', zh: '邮箱账户绑定成功' },
  smtpNotConfigured: { en: 'SMTP is not configured; please contact the administrator', zh: 'SMTP 未配置，请联系管理员' },
  mailFailed: { en: 'Failed to send the mail; please try again later', zh: '邮件发送失败，请稍后重试' },

  // Mail. {system} is the SystemName option; HTML bodies get their values escaped.
  codeMailSubject: { en: '{system} email verification', zh: '{system} 邮箱验证邮件' },
  codeMailText: {
    en: 'Hello,\n\nyou are verifying your email address for {system}.\nYour verification code is: {code}\nIt is valid for {minutes} minutes. If you did not ask for it, ignore this mail.',
    zh: '您好，\n\n您正在进行 {system} 邮箱验证。\n您的验证码为：{code}\n验证码 {minutes} 分钟内有效，如果不是本人操作，请忽略。'
  },
  codeMailHtml: {
    en: '<p>Hello,</p><p>you are verifying your email address for {system}.</p><p>Your verification code is: <strong>{code}</strong></p><p>It is valid for {minutes} minutes. If you did not ask for it, ignore this mail.</p>',
    zh: '<p>您好，</p><p>您正在进行 {system} 邮箱验证。</p><p>您的验证码为：<strong>{code}</strong></p><p>验证码 {minutes} 分钟内有效，如果不是本人操作，请忽略。</p>'
  },
  resetMailSubject: { en: '{system} password reset', zh: '{system} 密码重置' },
  resetMailText: {
    en: 'Hello,\n\nyou asked to reset your {system} password. Open this link to set a new one:\n{link}\nThe link is valid for {minutes} minutes and works once. If you did not ask for it, ignore this mail.',
    zh: '您好，\n\n您正在进行 {system} 密码重置。请打开以下链接：\n{link}\n链接 {minutes} 分钟内有效，且只能使用一次。如果不是本人操作，请忽略。'
  },
  resetMailHtml: {
    en: '<p>Hello,</p><p>you asked to reset your {system} password. <a href="{link}">Click here</a> to set a new one, or open this address:</p><p>{link}</p><p>The link is valid for {minutes} minutes and works once. If you did not ask for it, ignore this mail.</p>',
    zh: '<p>您好，</p><p>您正在进行 {system} 密码重置。<a href="{link}">点击此处</a>进行重置，或打开以下链接：</p><p>{link}</p><p>链接 {minutes} 分钟内有效，且只能使用一次。如果不是本人操作，请忽略。</p>'
  },
  serverAddressRequired: { en: 'Password reset needs the server address; ask the administrator to set it in the system settings', zh: '重置密码需要服务器地址，请联系管理员在系统设置中填写' }
})
