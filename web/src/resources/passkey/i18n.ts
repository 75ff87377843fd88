import { defineCatalogue } from '../../i18n/catalogue.ts'

/** Passkeys (WebAuthn): personal settings, the login button, the verification dialog's option, the admin's reset, the system options. */
export default defineCatalogue('passkey', {
  title: 'Passkeys',
  intro: 'Sign in with your fingerprint, face or screen lock instead of a password. A passkey stays on your device or in your password manager; this site keeps only its public key.',
  unavailable: 'The administrator has not turned passkeys on. Passkeys you added stay listed and can be removed.',
  unsupported: 'This browser cannot use passkeys here: they need a current browser and an HTTPS address (or localhost).',
  empty: 'No passkey yet.',
  loadFailed: 'Could not load your passkeys',
  add: 'Add a passkey',
  addTitle: 'Add a passkey',
  addHelp: 'Give it a name you will recognise, then follow your browser\'s prompt.',
  name: 'Name',
  namePlaceholder: 'e.g. Work laptop',
  continue: 'Continue',
  added: 'Passkey added',
  rename: 'Rename',
  renameTitle: 'Rename passkey',
  renamed: 'Passkey renamed',
  remove: 'Remove',
  removeNamed: 'Remove passkey {{name}}',
  renameNamed: 'Rename passkey {{name}}',
  removeTitle: 'Remove passkey',
  removeBody: 'Remove the passkey "{{name}}"? It will no longer sign you in; your other ways of signing in stay.',
  removed: 'Passkey removed',
  details: 'Added {{created}} · {{used}}',
  lastUsed: 'last used {{time}}',
  neverUsed: 'never used',
  synced: 'Synced',
  login: {
    button: 'Sign in with a passkey',
    waiting: 'Waiting for your passkey…'
  },
  verify: {
    button: 'Use a passkey',
    or: 'or'
  },
  errors: {
    cancelled: 'The passkey request was cancelled or timed out',
    alreadyRegistered: 'This authenticator already holds a passkey for your account',
    domain: 'The browser refused: this address does not match the site\'s passkey settings (relying party ID)',
    unsupported: 'This browser cannot use passkeys here',
    failed: 'The passkey request failed: {{message}}',
    nameRequired: 'Enter a name'
  },
  admin: {
    section: 'Passkeys',
    count: 'Passkeys: {{count}}',
    none: 'No passkey',
    reset: 'Reset passkeys',
    resetTitle: 'Reset passkeys',
    resetBody: 'Remove every passkey of {{name}} and sign them out everywhere? They sign in another way until they add a passkey again.',
    resetDone: 'Passkeys reset'
  },
  settings: {
    card: 'Passkeys',
    cardHelp: 'Passwordless sign-in and verification with WebAuthn passkeys. Browsers allow them only on HTTPS addresses and localhost.',
    PasskeyEnabled: 'Allow passkeys (sign-in, verification, adding new ones)',
    PasskeyRPID: 'Relying party ID',
    PasskeyRPIDHelp: 'The domain passkeys belong to, e.g. example.com (it covers its subdomains). Empty: the host name each request was made to. Changing it later makes existing passkeys unusable.',
    PasskeyOrigins: 'Allowed origins',
    PasskeyOriginsHelp: 'Comma-separated addresses the console is opened at, e.g. https://console.example.com; each within the relying party ID. Empty: the address of each request.'
  }
}, {
  title: '通行密钥',
  intro: '使用指纹、面容或屏幕锁代替密码登录。通行密钥保存在您的设备或密码管理器中，本站只保存其公钥。',
  unavailable: '管理员尚未启用通行密钥。已添加的通行密钥仍会列出，并可删除。',
  unsupported: '此浏览器无法在这里使用通行密钥：需要较新的浏览器以及 HTTPS 地址（或 localhost）。',
  empty: '尚未添加通行密钥。',
  loadFailed: '无法加载通行密钥',
  add: '添加通行密钥',
  addTitle: '添加通行密钥',
  addHelp: '起一个便于识别的名称，然后按浏览器的提示操作。',
  name: '名称',
  namePlaceholder: '例如：工作笔记本',
  continue: '继续',
  added: '通行密钥已添加',
  rename: '重命名',
  renameTitle: '重命名通行密钥',
  renamed: '通行密钥已重命名',
  remove: '删除',
  removeNamed: '删除通行密钥 {{name}}',
  renameNamed: '重命名通行密钥 {{name}}',
  removeTitle: '删除通行密钥',
  removeBody: '确定删除通行密钥“{{name}}”吗？删除后将无法用它登录，其他登录方式不受影响。',
  removed: '通行密钥已删除',
  details: '添加于 {{created}} · {{used}}',
  lastUsed: '最近使用 {{time}}',
  neverUsed: '从未使用',
  synced: '已同步',
  login: {
    button: '使用通行密钥登录',
    waiting: '正在等待通行密钥…'
  },
  verify: {
    button: '使用通行密钥',
    or: '或'
  },
  errors: {
    cancelled: '通行密钥请求已取消或超时',
    alreadyRegistered: '此认证器中已有您账户的通行密钥',
    domain: '浏览器拒绝了请求：当前地址与本站的通行密钥设置（依赖方 ID）不符',
    unsupported: '此浏览器无法在这里使用通行密钥',
    failed: '通行密钥请求失败：{{message}}',
    nameRequired: '请输入名称'
  },
  admin: {
    section: '通行密钥',
    count: '通行密钥：{{count}} 个',
    none: '没有通行密钥',
    reset: '重置通行密钥',
    resetTitle: '重置通行密钥',
    resetBody: '确定删除 {{name}} 的全部通行密钥并让其在所有设备上退出登录吗？在重新添加通行密钥之前，该用户需使用其他方式登录。',
    resetDone: '通行密钥已重置'
  },
  settings: {
    card: '通行密钥',
    cardHelp: '使用 WebAuthn 通行密钥进行免密码登录和安全验证。浏览器只在 HTTPS 地址和 localhost 上允许使用。',
    PasskeyEnabled: '允许使用通行密钥（登录、安全验证、添加新的通行密钥）',
    PasskeyRPID: '依赖方 ID（RP ID）',
    PasskeyRPIDHelp: '通行密钥所属的域名，例如 example.com（包括其子域名）。留空：使用每个请求所访问的主机名。之后修改会导致已有的通行密钥无法使用。',
    PasskeyOrigins: '允许的来源',
    PasskeyOriginsHelp: '访问控制台所用的地址，以逗号分隔，例如 https://console.example.com；每个都必须属于依赖方 ID。留空：使用每个请求自身的地址。'
  }
})
