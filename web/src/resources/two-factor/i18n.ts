import { defineCatalogue } from '../../i18n/catalogue.ts'

/** Two-factor sign-in (TOTP), its admin side, and the secure-verification dialog (components/VerifyDialog). */
export default defineCatalogue('twoFactor', {
  title: 'Two-factor authentication',
  intro: 'Sign in with your password and a 6-digit code from an authenticator app (Google Authenticator, Microsoft Authenticator, 1Password, …).',
  status: { enabled: 'Enabled', disabled: 'Not enabled', pending: 'Setup not finished', locked: 'Sign-in is locked after too many wrong attempts; try again later' },
  backupRemaining: 'Backup codes left: {{count}}',
  backupLow: 'Few backup codes are left: generate new ones.',
  setup: {
    start: 'Set up',
    restart: 'Start again',
    title: 'Set up two-factor authentication',
    scan: '1. Scan this QR code with your authenticator app',
    qrAlt: 'QR code of the authenticator key',
    manual: 'Or enter this key by hand',
    secret: 'Key',
    backup: '2. Keep these backup codes somewhere safe',
    backupHelp: 'Each code signs you in once when your phone is not at hand. They are shown only now.',
    confirm: '3. Enter the code the app shows',
    enable: 'Enable',
    enabled: 'Two-factor authentication is on',
    cancel: 'Later'
  },
  backup: {
    copy: 'Copy all',
    download: 'Download',
    copied: 'Backup codes copied',
    fileHeader: 'Backup codes of {{user}} at {{site}} (each works once)',
    regenerate: 'New backup codes',
    regenerateTitle: 'Generate new backup codes',
    regenerateHelp: 'The current backup codes stop working. Confirm with a code from your app or a backup code.',
    regenerated: 'New backup codes generated; the old ones no longer work',
    newCodes: 'Your new backup codes',
    generate: 'Generate'
  },
  disable: {
    button: 'Disable',
    title: 'Disable two-factor authentication',
    help: 'Your password alone will sign you in again. Confirm with a code from your app or a backup code.',
    confirm: 'Disable',
    done: 'Two-factor authentication disabled'
  },
  code: {
    totp: 'Authentication code',
    totpHelp: 'The 6-digit code from your authenticator app',
    backup: 'Backup code',
    backupHelp: 'One of your backup codes, such as abcd-efgh-jkmn-pqrs',
    either: 'Code from the app or a backup code',
    required: 'Enter the code'
  },
  login: {
    title: 'Two-factor authentication',
    prompt: 'Enter the 6-digit code from your authenticator app.',
    promptBackup: 'Enter one of your backup codes. Each works once.',
    useBackup: 'Use a backup code',
    useTotp: 'Use the authenticator app',
    submit: 'Verify',
    back: 'Back to sign in'
  },
  required: {
    title: 'Set up two-factor authentication',
    body: 'The administrator requires two-factor authentication for administrators. Set it up to continue using the console.',
    done: 'Continue to the console',
    signOut: 'Sign out'
  },
  verify: {
    title: 'Confirm it is you',
    help: 'This action needs a fresh verification. It lasts 5 minutes.',
    password: 'Password',
    totp: 'Authenticator',
    passwordLabel: 'Your password',
    submit: 'Verify',
    none: 'Your account has no password or two-factor authentication to verify with.',
    verified: 'Verified'
  },
  admin: {
    column: '2FA',
    on: '2FA on',
    stats: 'Two-factor authentication: {{enabled}} of {{total}} users ({{rate}}%)',
    section: 'Two-factor authentication',
    reset: 'Reset 2FA',
    resetTitle: 'Reset two-factor authentication',
    resetBody: 'Remove the two-factor authentication of {{name}} and sign them out everywhere? They sign in with the password alone until they set it up again.',
    resetDone: 'Two-factor authentication reset'
  }
}, {
  title: '两步验证',
  intro: '登录时除密码外，还需输入身份验证器应用（Google Authenticator、Microsoft Authenticator、1Password 等）中的 6 位验证码。',
  status: { enabled: '已启用', disabled: '未启用', pending: '设置未完成', locked: '错误次数过多，登录已被暂时锁定，请稍后再试' },
  backupRemaining: '剩余备用码：{{count}} 个',
  backupLow: '备用码所剩不多，请重新生成。',
  setup: {
    start: '开始设置',
    restart: '重新设置',
    title: '设置两步验证',
    scan: '1. 用身份验证器应用扫描二维码',
    qrAlt: '身份验证器密钥的二维码',
    manual: '或手动输入此密钥',
    secret: '密钥',
    backup: '2. 妥善保存这些备用码',
    backupHelp: '手机不在身边时，每个备用码可登录一次。备用码仅显示这一次。',
    confirm: '3. 输入应用中显示的验证码',
    enable: '启用',
    enabled: '两步验证已启用',
    cancel: '稍后'
  },
  backup: {
    copy: '全部复制',
    download: '下载',
    copied: '备用码已复制',
    fileHeader: '{{user}} 在 {{site}} 的备用码（每个只能使用一次）',
    regenerate: '重新生成备用码',
    regenerateTitle: '重新生成备用码',
    regenerateHelp: '当前的备用码将失效。请输入身份验证器中的验证码或一个备用码确认。',
    regenerated: '已生成新的备用码，旧备用码已失效',
    newCodes: '新的备用码',
    generate: '生成'
  },
  disable: {
    button: '关闭',
    title: '关闭两步验证',
    help: '关闭后仅凭密码即可登录。请输入身份验证器中的验证码或一个备用码确认。',
    confirm: '关闭',
    done: '两步验证已关闭'
  },
  code: {
    totp: '验证码',
    totpHelp: '身份验证器应用中的 6 位验证码',
    backup: '备用码',
    backupHelp: '您的一个备用码，例如 abcd-efgh-jkmn-pqrs',
    either: '应用中的验证码或备用码',
    required: '请输入验证码'
  },
  login: {
    title: '两步验证',
    prompt: '请输入身份验证器应用中的 6 位验证码。',
    promptBackup: '请输入一个备用码，每个备用码只能使用一次。',
    useBackup: '使用备用码',
    useTotp: '使用身份验证器',
    submit: '验证',
    back: '返回登录'
  },
  required: {
    title: '设置两步验证',
    body: '管理员要求所有管理员启用两步验证。请先完成设置，再继续使用控制台。',
    done: '进入控制台',
    signOut: '退出登录'
  },
  verify: {
    title: '安全验证',
    help: '此操作需要重新验证身份，验证在 5 分钟内有效。',
    password: '密码',
    totp: '身份验证器',
    passwordLabel: '您的密码',
    submit: '验证',
    none: '您的账户没有可用于验证的密码或两步验证。',
    verified: '验证成功'
  },
  admin: {
    column: '两步验证',
    on: '两步验证',
    stats: '两步验证：{{total}} 个用户中 {{enabled}} 个已启用（{{rate}}%）',
    section: '两步验证',
    reset: '重置两步验证',
    resetTitle: '重置两步验证',
    resetBody: '确定移除 {{name}} 的两步验证并让其在所有设备上退出登录吗？在重新设置之前，该用户仅凭密码即可登录。',
    resetDone: '两步验证已重置'
  }
})
