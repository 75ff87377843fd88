import type { Translations } from './catalogue.ts'
import type { Messages } from './en.ts'

export const zh: Translations<Messages> = {
  nav: {
    home: '首页', console: '控制台', about: '关于', login: '登录', register: '注册', logout: '退出登录',
    channel: '渠道', token: '令牌', user: '用户管理', log: '日志', detail: '数据看板', setting: '设置',
    topup: '钱包', playground: '操练场', redemption: '兑换码', midjourney: '绘图', task: '音乐任务',
    pricing: '模型价格', chat: '聊天', menu: '菜单', personal: '个人设置', audit: '审计日志'
  },
  theme: { light: '浅色', dark: '深色', system: '跟随系统', choose: '主题' },
  language: { switch: 'English', choose: '语言' },
  home: { title: '一个 API，连接所有模型', subtitle: '把任意 OpenAI 客户端或 SDK 指向 {{address}}（兼容 OpenAI 的 API），即可使用管理员接入的全部模型。Claude Code 等 Anthropic 客户端和 Google 的 Gemini SDK 也可使用，基础 URL 设为 {{origin}}。' },
  status: { unreachable: '无法正常连接至服务器' },
  notFound: { title: '页面不存在', body: '页面不存在，请检查地址是否正确。', back: '返回首页' },
  error: {
    tooManyRequests: '请求次数过多，请稍后再试',
    internal: '服务器内部错误，请联系管理员',
    demo: '本站仅作演示之用，无服务端',
    generic: '错误：{{message}}',
    network: '无法正常连接至服务器',
    expired: '未登录或登录已过期，请重新登录'
  },
  common: {
    save: '保存', cancel: '取消', confirm: '确定', delete: '删除', edit: '编辑', add: '添加', search: '搜索',
    refresh: '刷新', copy: '复制', copied: '已复制', enable: '启用', disable: '禁用', close: '关闭', submit: '提交',
    loading: '加载中…', none: '无', actions: '操作', status: '状态', name: '名称', id: 'ID', yes: '是', no: '否',
    rowsPerPage: '每页行数', displayedRows: '第 {{from}}–{{to}} 条，共 {{count}} 条', empty: '暂无数据', copyFailed: '无法复制到剪贴板，请手动复制：',
    unlimited: '无限', never: '永不过期', saved: '保存成功', noneSelected: '请至少选择一行', reset: '重置',
    forbidden: '无权访问此页面，权限不足'
  }
}
