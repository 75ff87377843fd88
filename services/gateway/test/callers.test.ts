import { tokenCacheKey } from '@modelgate/contracts'
import { tokenKeyHash } from '@modelgate/service'
import t from 'tap'
import { CallerCache } from '../src/relay/callers.js'
import { buildGateway, seedToken, seedUser } from './fixtures.js'

t.test('keys are remembered in memory by key, and a flood of made-up keys pushes out the oldest', async (t) => {
  const { app } = await buildGateway(t)
  const user = await seedUser(app.db)
  const { row, key } = await seedToken(app.db, user.id)
  const cache = new CallerCache(app.db, app.redis, { localMax: 3 })
  // Without memory, the token would now be unknown: its row and its Redis entry are gone.
  const forgetOutside = async () => {
    await app.db.deleteFrom('tokens').where('id', '=', row.id).execute()
    await app.redis.del(tokenCacheKey(tokenKeyHash(key)))
  }

  t.equal((await cache.find(key))?.token.id, row.id)
  await forgetOutside()
  t.equal((await cache.find(key))?.token.id, row.id, 'found in memory, without Redis or Postgres')
  await cache.find('sk-madeup1')
  await cache.find('sk-madeup2')
  t.equal((await cache.find(key))?.token.id, row.id, 'still held with three entries')
  await cache.find('sk-madeup3')
  t.equal(await cache.find(key), null, 'the fourth key pushed the oldest out: looked up again, it is gone')
})
