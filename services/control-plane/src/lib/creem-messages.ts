import { defineMessages } from './i18n.js'

/** Creem top-up and plan purchase through Creem (services/creem.ts). */
export const CM = defineMessages({
  creemDisabled: { en: 'Creem payment is not enabled by the administrator', zh: '管理员未开启 Creem 支付' },
  productUnknown: { en: 'This product is not on sale', zh: '该商品不存在或已下架' },
  creemAuthFailed: { en: 'Creem refused the API key; ask the administrator to check the Creem settings', zh: 'Creem 拒绝了 API 密钥，请联系管理员检查 Creem 设置' },
  creemRefused: { en: 'Creem refused the payment: {detail}', zh: 'Creem 拒绝了支付请求：{detail}' },
  creemUnreachable: { en: 'Creem could not be reached; try again later', zh: '无法连接 Creem，请稍后再试' },
  planUnknown: { en: 'This plan does not exist or is not on sale', zh: '该套餐不存在或未上架' },
  planNoCreemProduct: { en: 'This plan cannot be bought through Creem', zh: '该套餐未配置 Creem 商品，无法通过 Creem 购买' },
  badProducts: { en: '{key}: {detail}', zh: '{key}：{detail}' }
})
