import t from 'tap'
import { codesFileName, codesText, defaultCodeName } from './download.ts'

t.test('the file is named after the code name, made safe', async (t) => {
  t.equal(codesFileName('promo'), 'promo.txt')
  t.equal(codesFileName(' a/b:c '), 'a_b_c.txt')
  t.equal(codesFileName(''), 'redemption.txt')
  t.equal(codesFileName('春节'), '春节.txt')
})

t.test('one code per line', async (t) => {
  t.equal(codesText(['a', 'b', 'c']), 'a\nb\nc')
})

t.test('an unnamed batch is named as the server names it', async (t) => {
  t.equal(defaultCodeName(100_000, { display_in_currency: true, quota_per_unit: 500_000 }), '$0.20')
  t.equal(defaultCodeName(100, { display_in_currency: true, quota_per_unit: 500_000 }), '100', 'under a cent: units')
  t.equal(defaultCodeName(100_000, { display_in_currency: false, quota_per_unit: 500_000 }), '100000')
})
