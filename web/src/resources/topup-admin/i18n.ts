import { defineCatalogue } from '../../i18n/catalogue.ts'

export default defineCatalogue('topupAdmin', {
  nav: 'Top-up orders',
  title: 'Top-up orders',
  intro: 'Every user\'s online payment orders. An order paid whose provider notification never arrived can be completed by hand: it is credited exactly as the notification would, once.',
  filter: {
    keyword: 'Trade number or username',
    status: 'Status',
    userId: 'User ID',
    start: 'Start time',
    end: 'End time',
    all: 'All',
    query: 'Query',
    reset: 'Reset filters',
    badTime: 'Please choose a valid time',
    badUser: 'The user ID must be a positive whole number'
  },
  col: {
    tradeNo: 'Trade number',
    user: 'User',
    money: 'Paid',
    quota: 'Credit',
    method: 'Method',
    status: 'Status',
    created: 'Created',
    completed: 'Completed',
    actions: 'Actions'
  },
  status: { pending: 'Pending', success: 'Completed', failed: 'Failed', expired: 'Expired', refunded: 'Refunded' },
  method: { alipay: 'Alipay', wxpay: 'WeChat Pay', stripe: 'Card (Stripe)' },
  complete: 'Complete',
  completeLabel: 'Complete order {{tradeNo}}',
  confirmTitle: 'Complete this order?',
  confirmBody: 'Order {{tradeNo}} of {{user}} becomes paid and {{quota}} is credited to the user. Do this only when the payment really went through.',
  completed: 'Order completed: {{quota}} credited to {{user}}',
  empty: 'No top-up orders match'
}, {
  nav: '充值订单',
  title: '充值订单',
  intro: '所有用户的在线支付订单。已付款但未收到支付回调的订单可以手动补单：与回调到达时完全相同地入账，且只入账一次。',
  filter: {
    keyword: '订单号或用户名',
    status: '状态',
    userId: '用户 ID',
    start: '开始时间',
    end: '结束时间',
    all: '全部',
    query: '查询',
    reset: '重置筛选',
    badTime: '请选择有效的时间',
    badUser: '用户 ID 必须是正整数'
  },
  col: {
    tradeNo: '订单号',
    user: '用户',
    money: '支付金额',
    quota: '到账额度',
    method: '支付方式',
    status: '状态',
    created: '创建时间',
    completed: '完成时间',
    actions: '操作'
  },
  status: { pending: '待支付', success: '已完成', failed: '失败', expired: '已过期', refunded: '已退款' },
  method: { alipay: '支付宝', wxpay: '微信支付', stripe: '银行卡（Stripe）' },
  complete: '补单',
  completeLabel: '为订单 {{tradeNo}} 补单',
  confirmTitle: '确认补单？',
  confirmBody: '{{user}} 的订单 {{tradeNo}} 将标记为已支付，并为该用户充值 {{quota}}。请仅在确认付款已到账时操作。',
  completed: '补单成功：已为 {{user}} 充值 {{quota}}',
  empty: '没有符合条件的充值订单'
})
