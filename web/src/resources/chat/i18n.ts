import { defineCatalogue } from '../../i18n/catalogue.ts'

export default defineCatalogue('chat', {
  noLinks: 'No chat links are configured; please contact the administrator',
  badLink: 'The chat link configuration is wrong; please contact the administrator',
  noToken: 'No enabled token is available; create or enable one first',
  redirecting: 'Opening the chat…'
}, {
  noLinks: '没有配置聊天链接，请联系管理员',
  badLink: '聊天链接配置错误，请联系管理员',
  noToken: '没有可用的已启用令牌，请先创建或启用一个令牌',
  redirecting: '正在打开聊天…'
})
