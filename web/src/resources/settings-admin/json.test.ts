import t from 'tap'
import { canonical, checkJson, duplicateKeys, pretty } from './json.ts'

t.test('a name entered twice in an object is found, however deep the values', async (t) => {
  t.same(duplicateKeys('{"default": 1, "vip": {"a": 1, "a": 2}, "vip": 2}'), ['vip'])
  t.same(duplicateKeys('{"a\\"b": 1, "c": "a\\"b", "a\\"b": 3}'), ['a"b'])
  t.same(duplicateKeys('{"default": 1, "vip": 2}'), [])
})

t.test('group ratios must be an object of numbers >= 0 with distinct, non-empty names', async (t) => {
  const rule = { shape: 'object', values: 'ratio' } as const
  t.equal(checkJson('{"default": 1, "vip": 0.5}', rule), undefined)
  t.match(checkJson('{"default": 1,', rule), { kind: 'syntax' })
  t.same(checkJson('[1]', rule), { kind: 'shape', expected: 'object' })
  t.same(checkJson('{"vip": 1, "vip": 2}', rule), { kind: 'duplicate', name: 'vip' })
  t.same(checkJson('{"vip": -1}', rule), { kind: 'value', name: 'vip', expected: 'ratio' })
  t.same(checkJson('{"vip": "1"}', rule), { kind: 'value', name: 'vip', expected: 'ratio' })
  t.same(checkJson('{" ": 1}', rule), { kind: 'emptyName' })
})

t.test('chats are a list; usable groups map names to descriptions', async (t) => {
  t.equal(checkJson('[{"Chat": "https://chat.example"}]', { shape: 'array' }), undefined)
  t.same(checkJson('{}', { shape: 'array' }), { kind: 'shape', expected: 'array' })
  t.same(checkJson('{"vip": 2}', { shape: 'object', values: 'string' }), { kind: 'value', name: 'vip', expected: 'string' })
})

t.test('layout and key order do not count as a change; values do', async (t) => {
  t.equal(canonical('{"b":1,"a":{"y":2,"x":1}}'), canonical(pretty('{"a":{"x":1,"y":2},"b":1}')))
  t.not(canonical('{"a":1}'), canonical('{"a":2}'))
  t.not(canonical('{"a":1'), canonical('{"a":1}'), 'text that does not parse differs from any value')
  t.equal(pretty('not json'), 'not json')
})
