import { OptionValues } from '@modelgate/contracts'
import t from 'tap'
import { costOf, dollarsPerMillion, type Price, priceDetails, priceOf, pricingTables } from '../src/index.js'

const tables = pricingTables(new OptionValues(new Map([
  ['ModelRatio', '{"m":1.5,"free":0,"cheap":0.0001}'],
  ['CompletionRatio', '{"m":4}'],
  ['ModelPrice', '{"img":0.04,"m2":0.1}'],
  ['GroupRatio', '{"default":1,"vip":0.5,"svip":2}'],
  ['CacheRatio', '{"m":0.1}'],
  ['AudioRatio', '{"m":16}'],
  ['AudioCompletionRatio', '{"m":2}']
])))

t.test('the spec\'s worked formula: group x model x (prompt + completion x completion ratio)', async (t) => {
  const price = priceOf(tables, 'm', 'svip')!
  t.same(price, { kind: 'per_token', modelRatio: 1.5, completionRatio: 4, groupRatio: 2, cacheRatio: 0.1, createCacheRatio: 1, audioRatio: 16, audioCompletionRatio: 2 })
  t.equal(costOf(price, { promptTokens: 1000, completionTokens: 500 }), 2 * 1.5 * (1000 + 500 * 4))
  // In dollars: cost / 500000 = group x model x (prompt + completion x cr) / 500000.
  t.equal(costOf(price, { promptTokens: 1000, completionTokens: 500 }) / 500_000, 2 * 1.5 * 3000 / 500_000)
  t.same(dollarsPerMillion(1.5, 2, 4), { prompt: 6, completion: 24 })
})

t.test('a per-call price wins over ratios and scales with the group', async (t) => {
  const price = priceOf(tables, 'img', 'vip')!
  t.equal(price.kind, 'per_call')
  t.equal(costOf(price, { promptTokens: 999, completionTokens: 999 }), 0.04 * 500_000 * 0.5)
})

t.test('an unpriced model has no price, an unknown group costs 1x, a missing completion ratio is 1', async (t) => {
  t.equal(priceOf(tables, 'unknown-model', 'default'), undefined)
  const p = priceOf(tables, 'm', 'nogroup')!
  t.equal(p.kind === 'per_token' && p.groupRatio, 1)
  const cheap = priceOf(tables, 'cheap', 'default')!
  t.equal(cheap.kind === 'per_token' && cheap.completionRatio, 1)
  t.equal(costOf(cheap, { promptTokens: 1, completionTokens: 0 }), 1, 'a used, non-free model costs at least one unit')
  t.equal(costOf(priceOf(tables, 'free', 'default')!, { promptTokens: 1000, completionTokens: 1000 }), 0, 'a free model costs nothing')
})

t.test('cached prompt tokens are billed at the cache ratio and never exceed the prompt', async (t) => {
  const m = priceOf(tables, 'm', 'default')!
  t.equal(costOf(m, { promptTokens: 1000, completionTokens: 0, cachedTokens: 800 }), Math.round((200 + 800 * 0.1) * 1.5), 'the CacheRatio option applies')
  const cheap = priceOf(tables, 'cheap', 'default')!
  t.equal(cheap.kind === 'per_token' && cheap.cacheRatio, 1, 'a model without a cache ratio bills cached tokens at 1x')
  const price: Price = { kind: 'per_token', modelRatio: 1, completionRatio: 1, groupRatio: 1, cacheRatio: 0.5, createCacheRatio: 1.25, audioRatio: 1, audioCompletionRatio: 1 }
  t.equal(costOf(price, { promptTokens: 100, completionTokens: 0, cachedTokens: 40 }), 60 + 20)
  t.equal(costOf(price, { promptTokens: 100, completionTokens: 0, cachedTokens: 400 }), 50, 'cached tokens are capped at the prompt (no double counting)')
  t.equal(costOf(price, { promptTokens: 100, completionTokens: 0, cachedTokens: 40, cacheWriteTokens: 20 }), 40 + 20 + 25, 'cache writes at the create cache ratio')
  t.equal(costOf(price, { promptTokens: 100, completionTokens: 0, cachedTokens: 90, cacheWriteTokens: 50 }), Math.round(45 + 10 * 1.25), 'cache writes are capped at what the cache reads left')
  t.equal(priceOf(tables, 'm', 'default')?.kind === 'per_token' && (priceOf(tables, 'm', 'default') as { createCacheRatio: number }).createCacheRatio, 1, 'a model without a create cache ratio bills writes at 1x')
})

t.test('audio tokens are billed at the audio ratios, as parts of the prompt and the completion', async (t) => {
  const m = priceOf(tables, 'm', 'default')!
  // 1000 prompt = 600 text + 400 audio; 300 completion = 100 text + 200 audio.
  const usage = { promptTokens: 1000, completionTokens: 300, audioPromptTokens: 400, audioCompletionTokens: 200 }
  t.equal(costOf(m, usage), Math.round(1.5 * (600 + 400 * 16 + 100 * 4 + 200 * 16 * 2)))
  t.equal(costOf(m, { ...usage, audioPromptTokens: 5000, audioCompletionTokens: 5000 }), Math.round(1.5 * (1000 * 16 + 300 * 16 * 2)), 'audio counts are capped at their totals')
  const cheap = priceOf(tables, 'cheap', 'default')!
  t.equal(costOf(cheap, { promptTokens: 10_000, completionTokens: 0, audioPromptTokens: 10_000 }), 1, 'a model without audio ratios bills audio as text')
  t.match(priceDetails(m), { audio_ratio: 16, audio_completion_ratio: 2 }, 'the log records the audio ratios')
})

t.test('property: cost is a non-negative integer and monotonic in tokens', async (t) => {
  let seed = 42
  const rand = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed / 2 ** 31 }
  let checked = 0
  for (let i = 0; i < 2000; i++) {
    const price: Price = rand() < 0.2
      ? { kind: 'per_call', modelPrice: rand() * 2, groupRatio: rand() * 3, quotaPerUnit: 500_000 }
      : { kind: 'per_token', modelRatio: rand() * 40, completionRatio: rand() * 10, groupRatio: rand() * 3, cacheRatio: rand(), createCacheRatio: rand() * 2, audioRatio: rand() * 70, audioCompletionRatio: rand() * 3 }
    const usage = { promptTokens: Math.floor(rand() * 200_000), completionTokens: Math.floor(rand() * 50_000), cachedTokens: Math.floor(rand() * 10_000), audioPromptTokens: Math.floor(rand() * 10_000), audioCompletionTokens: Math.floor(rand() * 10_000) }
    const c = costOf(price, usage)
    if (!Number.isSafeInteger(c) || c < 0) t.fail(`bad cost ${c}`)
    const more = costOf(price, { ...usage, promptTokens: usage.promptTokens + 1 + Math.floor(rand() * 100) })
    const moreOut = costOf(price, { ...usage, completionTokens: usage.completionTokens + 1 + Math.floor(rand() * 100) })
    if (more < c || moreOut < c) t.fail(`not monotonic: ${c} -> ${more}, ${moreOut}`)
    checked++
  }
  t.equal(checked, 2000)
})
