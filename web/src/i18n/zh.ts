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
  },
  creem: {
    title: 'Creem 支付',
    help: '选择一个套餐，在 Creem 的安全页面完成支付，Creem 确认支付后额度自动到账。',
    price: '{{price}} {{currency}}',
    credits: '到账 {{quota}}',
    confirmTitle: '确认购买',
    product: '套餐',
    payable: '应付金额',
    quota: '到账额度',
    method: '支付方式',
    methodName: 'Creem',
    hint: '即将跳转到 Creem 支付页面，Creem 确认支付后额度自动到账。',
    pay: '立即支付',
    returned: 'Creem 已收到付款，确认后额度会自动到账。',
    settings: {
      title: 'Creem',
      help: '通过 Creem 销售充值套餐。API 密钥、Webhook 密钥和至少一个商品都设置后才会开放。',
      webhook: '需在 Creem 添加的 Webhook 地址：{{url}}（事件 checkout.completed、refund.created）。',
      apiKey: 'API 密钥',
      webhookSecret: 'Webhook 密钥',
      testMode: '测试模式',
      testModeHelp: '开启后在 Creem 测试环境（test-api.creem.io）创建支付，需使用测试密钥。',
      products: '商品',
      productsHelp: 'JSON 数组，每个套餐一项：{"name": "入门", "productId": "prod_...", "price": 4.99, "currency": "USD", "quota": 500000}。支付成功后充值对应额度。',
      apiBase: 'API 地址',
      apiBaseHelp: '留空则使用 Creem 官方 API（按测试模式开关选择测试或正式环境）。允许私有地址，拒绝云元数据地址。',
      refundDeducts: '退款时扣回额度',
      refundDeductsHelp: '开启后全额退款会从余额中扣回已充值的额度。'
    }
  }
}
