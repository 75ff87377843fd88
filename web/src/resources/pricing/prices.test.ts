import t from 'tap'
import { groupRatioOf, initialGroup, priceOf, ratioColour, usd } from './prices.ts'

t.test('per-token prices per 1M tokens: ratio x 2 x group ratio, completion also x completion ratio', async (t) => {
  const item = { quota_type: 0 as const, model_ratio: 1.25, completion_ratio: 4, model_price: -1 }
  t.same(priceOf(item, 1), { kind: 'per_token', prompt: 2.5, completion: 10 })
  t.same(priceOf(item, 2), { kind: 'per_token', prompt: 5, completion: 20 })
  t.same(priceOf({ ...item, model_ratio: 0.075 }, 1), { kind: 'per_token', prompt: 0.15, completion: 0.6 })
  t.equal(usd(0.075 * 2), '$0.15')
  t.equal(usd(0.075 * 4 * 2), '$0.6')
})

t.test('per-call prices: the fixed price x group ratio', async (t) => {
  t.same(priceOf({ quota_type: 1, model_ratio: 0, completion_ratio: 0, model_price: 0.04 }, 1.5), { kind: 'per_call', call: 0.06 })
})

t.test('group ratio badges: over 5 red, over 3 orange, over 1 blue', async (t) => {
  t.same([6, 5, 3.5, 3, 1.1, 1, 0.5].map(ratioColour), ['error', 'warning', 'warning', 'info', 'info', 'default', 'default'])
})

t.test('the first group shown and missing ratios', async (t) => {
  t.equal(initialGroup(['default', 'vip'], 'vip'), 'vip')
  t.equal(initialGroup(['default', 'vip'], 'svip'), 'default')
  t.equal(initialGroup(['vip'], undefined), 'vip')
  t.equal(groupRatioOf({ vip: 2 }, 'svip'), 1)
})
