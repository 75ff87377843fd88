import t from 'tap'
import { csvField, neutralizeCell } from './cells.ts'

t.test('cells that a spreadsheet would read as a formula are prefixed with a quote', async (t) => {
  for (const v of ['=HYPERLINK("http://x")', "+cmd|' /C calc'!A0", '-2+3', '@SUM(A1)', '\t=1', '\r=1']) {
    t.equal(neutralizeCell(v), `'${v}`, JSON.stringify(v))
  }
  for (const v of ['abc', '12', '', ' =x', 'a=b']) t.equal(neutralizeCell(v), v, JSON.stringify(v))
})

t.test('CSV fields are neutralised and quoted', async (t) => {
  t.equal(csvField('=1,2'), '"\'=1,2"')
  t.equal(csvField('a"b'), '"a""b"')
  t.equal(csvField('line\nbreak'), '"line\nbreak"')
  t.equal(csvField('plain'), 'plain')
})
