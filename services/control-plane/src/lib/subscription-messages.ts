import { defineMessages } from './i18n.js'

/** Subscription plans, purchases and entitlements (docs/domain.md, "Subscription plans"). */
export const SM = defineMessages({
  titleLength: { en: 'The plan title must be 1 to {max} characters', zh: '套餐标题长度必须在 1 到 {max} 个字符之间' },
  durationUnit: { en: 'The duration unit must be one of year, month, week, day, hour or custom', zh: '时长单位必须是 year、month、week、day、hour 或 custom 之一' },
  durationValue: { en: 'The duration must be a whole number from 1 to {max}', zh: '时长必须是 1 到 {max} 之间的整数' },
  customSeconds: { en: 'A custom duration must be a whole number of at least {min} seconds', zh: '自定义时长必须是不少于 {min} 秒的整数' },
  priceAmount: { en: 'The price must be a number of at least 0 with at most 2 decimals', zh: '价格必须是不小于 0 且最多两位小数的数字' },
  priceTooHigh: { en: 'The price is too high', zh: '价格过高' },
  currency: { en: 'The currency must be a 3-letter code (e.g. USD)', zh: '货币必须是 3 个字母的代码（如 USD）' },
  itemsCount: { en: 'A plan needs 1 to {max} items', zh: '套餐必须包含 1 到 {max} 个权益项' },
  modelNameEmpty: { en: 'Each item needs a model name', zh: '每个权益项都必须填写模型名称' },
  quotaType: { en: 'The item type must be 0 (quota) or 1 (requests)', zh: '权益类型必须是 0（额度）或 1（次数）' },
  amountTotal: { en: 'The item amount must be a positive whole number (at most {max})', zh: '权益数量必须是正整数（不超过 {max}）' },
  duplicateItem: { en: 'The plan lists model {model} with the same type twice', zh: '套餐中模型 {model} 的同类型权益重复' },
  planNotFound: { en: 'Subscription plan not found', zh: '订阅套餐不存在' },
  planUnavailable: { en: 'This subscription plan is not available', zh: '该订阅套餐不可购买' },
  planCreated: { en: 'Plan created', zh: '套餐已创建' },
  planUpdated: { en: 'Plan updated', zh: '套餐已更新' },
  planEnabled: { en: 'Plan enabled', zh: '套餐已启用' },
  planDisabled: { en: 'Plan disabled', zh: '套餐已禁用' },

  subscriptionNotFound: { en: 'Subscription not found', zh: '订阅不存在' },
  subscriptionNotActive: { en: 'Only an active subscription can be changed', zh: '只能修改生效中的订阅' },
  subscriptionBound: { en: 'Plan {plan} given to {username}', zh: '已为 {username} 开通套餐 {plan}' },
  subscriptionInvalidated: { en: 'Subscription invalidated', zh: '订阅已作废' },
  badPreference: {
    en: 'The billing preference must be subscription_first, wallet_first, subscription_only or wallet_only',
    zh: '计费偏好必须是 subscription_first、wallet_first、subscription_only 或 wallet_only 之一'
  },
  preferenceSaved: { en: 'Billing preference saved', zh: '计费偏好已保存' },
  autoRenewOn: { en: 'Auto-renewal turned on', zh: '已开启自动续费' },
  autoRenewOff: { en: 'Auto-renewal turned off', zh: '已关闭自动续费' },
  renewedByStripe: { en: 'This subscription is renewed by Stripe each period; cancel or change it there', zh: '该订阅由 Stripe 按周期自动续费，请在 Stripe 中取消或修改' },

  balanceShort: {
    en: 'Your balance is too low for this plan: it costs {price}, you have {balance}',
    zh: '余额不足：该套餐需要 {price}，当前余额 {balance}'
  },
  priceOutOfRange: { en: 'This plan\'s price cannot be paid from the balance', zh: '该套餐价格无法使用余额支付' },
  purchased: { en: 'Subscribed to {plan}', zh: '已订阅套餐 {plan}' },
  stripeNotForPlan: { en: 'This plan cannot be paid by card (it has no Stripe price)', zh: '该套餐未配置 Stripe 价格，无法使用银行卡支付' },
  creemNotForPlan: { en: 'This plan cannot be paid through Creem (it has no Creem product)', zh: '该套餐未配置 Creem 产品，无法通过 Creem 支付' },
  epayTooLow: { en: 'This plan is free or too cheap for online payment; pay it from the balance', zh: '该套餐金额过低，无法在线支付，请使用余额购买' }
})
