import type { Messages } from './en'

export const zh: Messages = {
  nav: { home: '首页', console: '控制台', about: '关于', login: '登录', register: '注册' },
  theme: { light: '浅色模式', dark: '深色模式' },
  language: { switch: 'English' },
  home: { title: '一个 API，连接所有模型', subtitle: '把任意 OpenAI、Anthropic 或 Gemini 客户端指向 {{address}}，即可使用管理员接入的全部模型。' },
  status: { unreachable: '无法正常连接至服务器' },
  notFound: { title: '页面不存在', body: '页面不存在，请检查地址是否正确。', back: '返回首页' }
}
