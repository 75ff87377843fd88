import { defineCatalogue } from '../../i18n/catalogue.ts'

export default defineCatalogue('setup', {
  title: 'Set up the system',
  intro: 'No account exists yet. Create the super admin: the account that manages channels, users and every setting.',
  username: 'Super admin username',
  usernameHelp: 'At most 12 characters',
  password: 'Password',
  passwordHelp: '8 to 20 characters',
  confirm: 'Confirm password',
  database: 'Database: {{type}}',
  submit: 'Create the super admin',
  required: 'Enter a username and a password',
  usernameLong: 'The username can be at most 12 characters',
  passwordLength: 'The password must be 8 to 20 characters',
  passwordsDiffer: 'The two passwords differ',
  done: 'Setup complete: sign in with the new account'
}, {
  title: '系统初始化',
  intro: '系统中还没有任何账户。请创建超级管理员：管理渠道、用户和所有设置的账户。',
  username: '超级管理员用户名',
  usernameHelp: '最多 12 个字符',
  password: '密码',
  passwordHelp: '8 到 20 个字符',
  confirm: '确认密码',
  database: '数据库：{{type}}',
  submit: '创建超级管理员',
  required: '请输入用户名和密码',
  usernameLong: '用户名最多 12 个字符',
  passwordLength: '密码长度必须为 8 到 20 个字符',
  passwordsDiffer: '两次输入的密码不一致',
  done: '初始化完成，请使用新账户登录'
})
