import t from 'tap'
import { buildGateway, reload, seedToken, seedUser } from './fixtures.js'

async function get (url: string, key: string): Promise<{ status: number, body: Record<string, unknown> }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
  return { status: res.status, body: await res.json() as Record<string, unknown> }
}

t.test('the billing endpoints chat clients call show a key\'s grant and spending', async (t) => {
  const { app, url } = await buildGateway(t)
  const user = await seedUser(app.db, { quota: 20_000_000 })
  await app.db.updateTable('users').set({ used_quota: 5_000_000 }).where('id', '=', user.id).execute()
  const { row, key } = await seedToken(app.db, user.id, { remain: 750_000, expired: 4102444800 })
  await app.db.updateTable('tokens').set({ used_quota: 250_000 }).where('id', '=', row.id).execute()
  await reload(app)

  for (const base of [`${url}/v1/dashboard/billing`, `${url}/dashboard/billing`]) {
    const sub = await get(`${base}/subscription`, key)
    t.equal(sub.status, 200)
    t.same(sub.body, {
      object: 'billing_subscription', has_payment_method: true, soft_limit_usd: 2, hard_limit_usd: 2, system_hard_limit_usd: 2, access_until: 4102444800
    }, `${base}: (750,000 left + 250,000 used) / 500,000 per dollar`)
    const usage = await get(`${base}/usage`, key)
    t.same(usage.body, { object: 'list', total_usage: 50 }, '250,000 used is half a dollar: 50 cents')
  }

  // Without DisplayTokenStatEnabled the owner's balance shows; without the currency, quota units.
  await app.db.insertInto('options').values([{ key: 'DisplayTokenStatEnabled', value: 'false' }, { key: 'DisplayInCurrencyEnabled', value: 'false' }]).execute()
  await reload(app)
  t.match((await get(`${url}/v1/dashboard/billing/subscription`, key)).body, { hard_limit_usd: 25_000_000 })
  t.match((await get(`${url}/v1/dashboard/billing/usage`, key)).body, { total_usage: 500_000_000 })

  const unlimited = await seedToken(app.db, user.id, { unlimited: true })
  await app.db.updateTable('options').set({ value: 'true' }).where('key', 'in', ['DisplayTokenStatEnabled', 'DisplayInCurrencyEnabled']).execute()
  await reload(app)
  t.match((await get(`${url}/v1/dashboard/billing/subscription`, unlimited.key)).body, { hard_limit_usd: 50, access_until: 0 }, 'an unlimited key shows its owner\'s balance')

  const wrong = await get(`${url}/v1/dashboard/billing/subscription`, 'sk-nosuchkey000000000000000000000000')
  t.equal(wrong.status, 401)
  t.match(wrong.body, { error: { message: 'Invalid API key' } })
})
