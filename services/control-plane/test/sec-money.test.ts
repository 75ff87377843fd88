import { randomBytes } from 'node:crypto'
import { LOG_TYPE, updateUser } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { sha256 } from '../src/plugins/app/auth.js'
import { createAccount } from '../src/services/users.js'
import { build, login, ROOT, sharedEnv } from './helpers.js'

const EN = { 'accept-language': 'en' }

/** A normal user signed in with a personal access token (no password hashing, so many are cheap). */
async function tokenUser (app: FastifyInstance, username: string): Promise<{ id: number, headers: Record<string, string> }> {
  const row = await createAccount(app, { username })
  const token = randomBytes(24).toString('base64url')
  await updateUser(app.db, row.id, { access_token_hash: sha256(token) })
  return { id: row.id, headers: { authorization: token, 'new-api-user': String(row.id), ...EN } }
}

/** Three control planes on one Postgres and Redis, as three replicas behind a load balancer. */
async function replicas (t: Test): Promise<FastifyInstance[]> {
  const env = await sharedEnv(t)
  // One after the other: the first one migrates and creates root.
  const out: FastifyInstance[] = []
  for (let i = 0; i < 3; i++) out.push(await build(t, {}, env))
  return out
}

t.test('SEC-16 redemption double spend: 50 concurrent claims of one code by 10 users on 3 replicas, and 50 aff_transfers of a balance covering one', async (t) => {
  const apps = await replicas(t)
  const app = apps[0]!
  const root = await login(app, ROOT.username, ROOT.password)
  const created = await app.inject({ method: 'POST', url: '/api/redemption/', headers: root.headers, payload: { name: 'sec16', quota: 654321 } })
  const [key] = created.json().data as string[]
  const users = await Promise.all(Array.from({ length: 10 }, async (_, i) => await tokenUser(app, `sec16u${i}`)))
  for (const u of users) await app.quota.setBalance('user', u.id, 0)

  const answers = await Promise.all(Array.from({ length: 50 }, async (_, i) => {
    const res = await apps[i % 3]!.inject({ method: 'POST', url: '/api/user/topup', headers: users[i % 10]!.headers, payload: { key } })
    return { status: res.statusCode, body: res.json() as { success: boolean, message: string, data?: number } }
  }))
  t.ok(answers.every((a) => a.status === 200), 'every claim is answered, none with a server error')
  const wins = answers.flatMap((a, i) => a.body.success ? [i] : [])
  t.equal(wins.length, 1, 'exactly one success')
  t.equal(answers[wins[0]!]!.body.data, 654321)
  t.ok(answers.filter((a) => !a.body.success).every((a) => a.body.message === 'Invalid or used redemption code'), 'all others: invalid or used code')
  const winner = users[wins[0]! % 10]!
  const quotas = await Promise.all(users.map(async (u) => (await app.db.selectFrom('users').select('quota').where('id', '=', u.id).executeTakeFirstOrThrow()).quota))
  t.equal(quotas.reduce((a, b) => a + b, 0), 654321, 'one quota credit in Postgres')
  t.equal(quotas[users.indexOf(winner)], 654321, 'to the winner')
  const cached = await Promise.all(users.map(async (u) => await app.quota.balance('user', u.id) ?? 0))
  t.equal(cached.reduce((a, b) => a + b, 0), 654321, 'and one in the balance the gateways spend from')
  t.match(await app.db.selectFrom('redemptions').selectAll().where('key', '=', key!).executeTakeFirstOrThrow(), { status: 3, used_user_id: winner.id })
  t.equal((await app.db.selectFrom('logs').select('user_id').where('type', '=', LOG_TYPE.topup).execute()).length, 1, 'one recharge log')

  // aff_transfer: the minimum (QuotaPerUnit, 500000) once from 700000, 50 times at once on 3 replicas.
  const inviter = await tokenUser(app, 'sec16aff')
  await app.db.updateTable('users').set({ aff_quota: 700_000, quota: 0 }).where('id', '=', inviter.id).execute()
  await app.quota.setBalance('user', inviter.id, 0)
  const transfers = await Promise.all(Array.from({ length: 50 }, async (_, i) => {
    const res = await apps[i % 3]!.inject({ method: 'POST', url: '/api/user/aff_transfer', headers: inviter.headers, payload: { quota: 500_000 } })
    return { status: res.statusCode, body: res.json() as { success: boolean, message: string } }
  }))
  t.equal(transfers.filter((a) => a.body.success).length, 1, 'exactly one transfer succeeds')
  t.ok(transfers.filter((a) => !a.body.success).every((a) => a.status === 200 && a.body.message === 'Insufficient affiliate quota'), 'the others are refused for the affiliate balance')
  const row = await app.db.selectFrom('users').select(['quota', 'aff_quota']).where('id', '=', inviter.id).executeTakeFirstOrThrow()
  t.same(row, { quota: 500_000, aff_quota: 200_000 }, 'aff_quota never negative, nothing created')
  t.equal(await app.quota.balance('user', inviter.id), 500_000, 'the cached balance moved once')
})
