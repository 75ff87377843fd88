import t from 'tap'
import { breakdownOf, durationColour, firstResponseColour, num } from './breakdown.ts'

t.test('a per-token row: prompt plus completion at the completion ratio, times model and group ratio', async (t) => {
  const b = breakdownOf({ prompt_tokens: 100, completion_tokens: 50, other: { model_ratio: 1.25, completion_ratio: 4, group_ratio: 1, model_price: -1 } }, 500_000)
  t.match(b, { kind: 'per_token', weighted: 300, modelRatio: 1.25, groupRatio: 1, exact: 375 })
  t.same(b?.kind === 'per_token' ? b.terms : [], [{ kind: 'prompt', tokens: 100 }, { kind: 'completion', tokens: 50, ratio: 4 }])
})

t.test('cached and audio tokens are taken out of the plain counts and weighted by their ratios', async (t) => {
  const b = breakdownOf({
    prompt_tokens: 1000,
    completion_tokens: 200,
    other: {
      model_ratio: 2, completion_ratio: 3, group_ratio: 1.5, model_price: -1, cache_ratio: 0.5, cached_tokens: 400,
      audio: true, audio_input: 100, audio_output: 50, audio_ratio: 8, audio_completion_ratio: 2
    }
  }, 500_000)
  // (500 + 400 x 0.5 + 100 x 8 + 150 x 3 + 50 x 8 x 2) x 2 x 1.5
  t.match(b, { kind: 'per_token', weighted: 500 + 200 + 800 + 450 + 800, exact: (500 + 200 + 800 + 450 + 800) * 3 })
})

t.test('tokens written to the cache are weighted by the cache write ratio, as the gateway bills them', async (t) => {
  const b = breakdownOf({
    prompt_tokens: 150,
    completion_tokens: 7,
    other: { model_ratio: 1.5, completion_ratio: 5, group_ratio: 1, model_price: -1, cache_ratio: 0.1, cached_tokens: 100, create_cache_ratio: 1.25, cache_write_tokens: 30 }
  }, 500_000)
  t.same(b?.kind === 'per_token' ? b.terms : [], [
    { kind: 'prompt', tokens: 20 }, { kind: 'cached', tokens: 100, ratio: 0.1 }, { kind: 'cacheWrite', tokens: 30, ratio: 1.25 }, { kind: 'completion', tokens: 7, ratio: 5 }
  ])
  t.match(b, { exact: (20 + 10 + 37.5 + 35) * 1.5 })
})

t.test('a per-call row: the fixed price times the group ratio, in quota units', async (t) => {
  t.match(breakdownOf({ prompt_tokens: 0, completion_tokens: 0, other: { model_price: 0.04, group_ratio: 2, model_ratio: 0 } }, 500_000),
    { kind: 'per_call', dollars: 0.08, exact: 40_000 })
})

t.test('rows without prices have no breakdown', async (t) => {
  t.equal(breakdownOf({ prompt_tokens: 0, completion_tokens: 0, other: null }, 500_000), undefined)
  t.equal(breakdownOf({ prompt_tokens: 0, completion_tokens: 0, other: { frt: 10 } }, 500_000), undefined)
})

t.test('time colours follow docs/domain.md', async (t) => {
  t.same([100, 101, 299, 300].map(durationColour), ['success', 'warning', 'warning', 'error'])
  t.same([2.9, 3, 9.9, 10].map(firstResponseColour), ['success', 'warning', 'warning', 'error'])
  t.equal(num(0.1 + 0.2), '0.3')
})
