import t from 'tap'
import { parseAmount, putRow, removeRow, rowsOf } from './pricing-rows.ts'

const maps = {
  ModelPrice: { 'dall-e-3': 0.04 },
  ModelRatio: { 'gpt-4o': 1.25, 'gpt-4o-mini': 0.075 },
  CompletionRatio: { 'gpt-4o': 4, 'claude-x': 5 }
}

t.test('rows list every model of any map, by name', async (t) => {
  t.same(rowsOf(maps).map((r) => r.name), ['claude-x', 'dall-e-3', 'gpt-4o', 'gpt-4o-mini'])
  t.same(rowsOf(maps).find((r) => r.name === 'gpt-4o'), { name: 'gpt-4o', price: undefined, ratio: 1.25, completion: 4 })
})

t.test('a row with a price is stored only as a price', async (t) => {
  const next = putRow(maps, { name: 'gpt-4o', price: 0.1, ratio: 2, completion: 3 })
  t.same(next.ModelPrice, { 'dall-e-3': 0.04, 'gpt-4o': 0.1 })
  t.same(next.ModelRatio, { 'gpt-4o-mini': 0.075 })
  t.same(next.CompletionRatio, { 'claude-x': 5 })
})

t.test('a ratio row drops its price; a changed ratio keeps its place', async (t) => {
  const next = putRow(maps, { name: 'dall-e-3', ratio: 3 })
  t.same(next.ModelPrice, {})
  t.same(next.ModelRatio, { 'gpt-4o': 1.25, 'gpt-4o-mini': 0.075, 'dall-e-3': 3 })
  t.same(Object.keys(putRow(maps, { name: 'gpt-4o', ratio: 2, completion: 4 }).ModelRatio), ['gpt-4o', 'gpt-4o-mini'])
  t.same(putRow(maps, { name: 'gpt-4o', ratio: 2 }).CompletionRatio, { 'claude-x': 5 }, 'a blank completion ratio is removed')
})

t.test('renaming moves the row; removing drops it from every map', async (t) => {
  const renamed = putRow(maps, { name: 'gpt-4o-new', ratio: 1.25, completion: 4 }, 'gpt-4o')
  t.same(renamed.ModelRatio, { 'gpt-4o-mini': 0.075, 'gpt-4o-new': 1.25 })
  t.same(renamed.CompletionRatio, { 'claude-x': 5, 'gpt-4o-new': 4 })
  const removed = removeRow(maps, 'gpt-4o')
  t.same([removed.ModelRatio, removed.CompletionRatio], [{ 'gpt-4o-mini': 0.075 }, { 'claude-x': 5 }])
  t.same(maps.ModelRatio, { 'gpt-4o': 1.25, 'gpt-4o-mini': 0.075 }, 'the input maps are not changed')
})

t.test('amounts are blank, a number >= 0, or invalid', async (t) => {
  t.equal(parseAmount(' '), undefined)
  t.equal(parseAmount('0.5'), 0.5)
  t.equal(parseAmount('0'), 0)
  t.equal(parseAmount('-1'), 'invalid')
  t.equal(parseAmount('abc'), 'invalid')
  t.equal(parseAmount('1,5'), 'invalid')
})
