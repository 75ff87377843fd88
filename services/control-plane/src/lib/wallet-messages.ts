import { defineMessages } from './i18n.js'

/** Redemption codes, redeeming and online top-up (docs/domain.md). */
export const WM = defineMessages({
  redemptionNotFound: { en: 'Redemption code not found', zh: '兑换码不存在' },
  nameLength: { en: 'The name must be 1 to {max} characters', zh: '兑换码名称长度必须在 1 到 {max} 个字符之间' },
  quotaRange: { en: 'The quota must be a whole number of at least 1', zh: '额度必须是不小于 1 的整数' },
  countRange: { en: 'The count must be an integer from 1 to {max}', zh: '生成数量必须是 1 到 {max} 之间的整数' },
  statusOneOrTwo: { en: 'The status can only be set to 1 (enabled) or 2 (disabled)', zh: '状态只能设置为 1（启用）或 2（禁用）' },
  usedCannotEdit: { en: 'This redemption code has been used and cannot be edited', zh: '兑换码已被使用，无法编辑' },
  usedCannotChangeStatus: { en: 'This redemption code has been used; it cannot be enabled or disabled', zh: '兑换码已被使用，无法启用或禁用' },
  redemptionsCreated: { en: '{count} redemption codes created', zh: '成功生成 {count} 个兑换码' },
  redemptionUpdated: { en: 'Redemption code updated', zh: '兑换码更新成功' },
  redemptionDeleted: { en: 'Redemption code deleted', zh: '兑换码已删除' },

  keyEmpty: { en: 'Please enter the redemption code', zh: '请输入兑换码' },
  invalidCode: { en: 'Invalid or used redemption code', zh: '无效的兑换码或兑换码已被使用' },
  redeemed: { en: 'Redeemed', zh: '兑换成功' },

  onlineTopUpDisabled: { en: 'Online top-up is not enabled by the administrator', zh: '管理员未开启在线充值' },
  callbackAddressMissing: {
    en: 'Online top-up needs the server address; ask the administrator to set it in the system settings',
    zh: '在线充值需要服务器地址，请联系管理员在系统设置中填写'
  },
  amountBelowMin: { en: 'The top-up amount cannot be less than {min}', zh: '充值数量不能小于 {min}' },
  payableTooLow: { en: 'The payable sum is too low', zh: '充值金额过低' },
  payableTooHigh: { en: 'The payable sum is too high', zh: '充值金额过高' },

  stripeTopUpDisabled: { en: 'Card payment (Stripe) is not enabled by the administrator', zh: '管理员未开启 Stripe 银行卡充值' },
  stripeAuthFailed: { en: 'Stripe refused the secret key; ask the administrator to check the Stripe settings', zh: 'Stripe 拒绝了密钥，请联系管理员检查 Stripe 设置' },
  stripeRefused: { en: 'Stripe refused the payment: {detail}', zh: 'Stripe 拒绝了支付请求：{detail}' },
  stripeUnreachable: { en: 'Stripe could not be reached; try again later', zh: '无法连接 Stripe，请稍后再试' },

  topUpNotFound: { en: 'Top-up order not found', zh: '充值订单不存在' },
  topUpAlreadyCompleted: { en: 'This top-up order is already completed', zh: '该充值订单已完成' },
  topUpNotPending: { en: 'Only a pending top-up order can be completed', zh: '只有待支付的充值订单可以补单' },
  topUpCompleted: { en: 'Order completed: {quota} credited to {username}', zh: '补单成功：已为 {username} 充值 {quota}' }
})
