import t from 'tap'
import { reloadsAfter } from './actions.ts'
import { columnPlacement, shownColumns } from './columns.ts'

t.test('columns marked when: false are left out', async (t) => {
  const shown = shownColumns([{ label: 'a' }, { label: 'b', when: false }, { label: 'c', when: true }])
  t.same(shown.map((c) => 'label' in c ? c.label : ''), ['a', 'c'])
})

t.test('secondary columns hide below their width and the actions column sticks, by position among those shown', async (t) => {
  const sx = columnPlacement([{ label: 'time' }, { label: 'channel', when: false }, { label: 'stream', from: 'xl' }, { label: 'actions', sticky: true }])
  t.same(Object.keys(sx), [
    '& > thead > tr > th:nth-of-type(2), & > tbody > tr > td:nth-of-type(2):not([colspan])',
    '& > thead > tr > th:nth-of-type(3), & > tbody > tr > td:nth-of-type(3):not([colspan])'
  ])
  t.same(Object.values(sx)[0], { display: { xs: 'none', xl: 'table-cell' } })
  t.match(Object.values(sx)[1], { position: 'sticky', right: 0, bgcolor: 'background.paper' })
  t.same(columnPlacement([{ label: 'a' }, { label: 'b' }]), {}, 'plain columns need no styles')
})

t.test('an action reloads as its option says', async (t) => {
  t.same([true, false].map((ok) => reloadsAfter('done', ok)), [true, false])
  t.same([true, false].map((ok) => reloadsAfter('always', ok)), [true, true])
  t.same([true, false].map((ok) => reloadsAfter('failed', ok)), [false, true])
  t.same([true, false].map((ok) => reloadsAfter('never', ok)), [false, false])
})
