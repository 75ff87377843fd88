import t from 'tap'
import { build, userSession } from './helpers.js'

t.test('GET /api/usage/token answers a relay key\'s own figures in new-api\'s shape', async (t) => {
  const app = await build(t)
  const alice = await userSession(app, 'alice')
  const created = await app.inject({
    method: 'POST', url: '/api/token/', headers: alice.headers,
    payload: { name: 'chat app', remain_quota: 9000, expired_time: 4102444800, model_limits_enabled: true, model_limits: 'gpt-4o,gpt-4o-mini' }
  })
  const tok = created.json().data as { id: number, full_key: string }
  await app.db.updateTable('tokens').set({ used_quota: 1000, remain_quota: 8000 }).where('id', '=', tok.id).execute()

  const res = await app.inject({ method: 'GET', url: '/api/usage/token', headers: { authorization: `Bearer ${tok.full_key}` } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  t.same(res.json(), {
    code: true,
    message: 'ok',
    data: {
      object: 'token_usage',
      name: 'chat app',
      total_granted: 9000,
      total_used: 1000,
      total_available: 8000,
      unlimited_quota: false,
      model_limits: { 'gpt-4o': true, 'gpt-4o-mini': true },
      model_limits_enabled: true,
      expires_at: 4102444800
    }
  })
  const bare = await app.inject({ method: 'GET', url: '/api/usage/token', headers: { authorization: `Bearer ${tok.full_key.slice(3)}` } })
  t.equal(bare.json().data.name, 'chat app', 'the key without sk- works too')

  const wrong = await app.inject({ method: 'GET', url: '/api/usage/token', headers: { authorization: 'Bearer sk-notakey0000000000000000000000', 'accept-language': 'en' } })
  t.equal(wrong.statusCode, 401)
  t.match(wrong.json(), { success: false, message: 'Invalid API key' })
  const none = await app.inject({ method: 'GET', url: '/api/usage/token', headers: { 'accept-language': 'en' } })
  t.equal(none.statusCode, 401)
  t.match(none.json(), { success: false, message: /No API key provided/ })
  const session = await app.inject({ method: 'GET', url: '/api/usage/token', headers: alice.headers })
  t.equal(session.statusCode, 401, 'a console session is not a relay key')

  await app.db.updateTable('tokens').set({ deleted_at: Math.floor(Date.now() / 1000) }).where('id', '=', tok.id).execute()
  t.equal((await app.inject({ method: 'GET', url: '/api/usage/token', headers: { authorization: `Bearer ${tok.full_key}` } })).statusCode, 401, 'a deleted key answers like an unknown one')
})
