import * as contracts from '@modelgate/contracts'
import t from 'tap'
import * as limits from './limits.ts'

t.test('the console uses the limits the server enforces', async (t) => {
  t.equal(limits.REDEMPTION_NAME_MAX, contracts.REDEMPTION_NAME_MAX)
  t.equal(limits.REDEMPTION_BATCH_MAX, contracts.REDEMPTION_BATCH_MAX)
  t.equal(limits.DEFAULT_REDEMPTION_QUOTA, contracts.DEFAULT_REDEMPTION_QUOTA)
})
