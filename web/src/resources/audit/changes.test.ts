import t from 'tap'
import { changeLines, sideText } from './changes.ts'

t.test('sides read as text; absent sides stay absent', async (t) => {
  t.equal(sideText('a'), 'a')
  t.equal(sideText(5), '5')
  t.equal(sideText({ 'gpt-4o': 2 }), '{"gpt-4o":2}')
  t.equal(sideText(null), 'null')
  t.same(changeLines({ name: { before: 'a', after: 'b' }, key: { after: '[changed]' }, deleted: { before: false } }), [
    { field: 'deleted', before: 'false', after: undefined },
    { field: 'key', before: undefined, after: '[changed]' },
    { field: 'name', before: 'a', after: 'b' }
  ])
})
