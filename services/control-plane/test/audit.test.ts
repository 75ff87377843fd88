import { type AuditLogView, OPTION_DEFAULTS, ROLES } from '@modelgate/contracts'
import { ensureAuditLogPartitions, sql } from '@modelgate/db'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { auditChanges, recordAudit } from '../src/services/audit.js'
import { build, login, ROOT, type Session, userSession } from './helpers.js'

/** A public address nobody trusts as a proxy: what req.ip must record. */
const ADDRESS = '203.0.113.7'

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'

async function setup (t: Test) {
  const app = await build(t)
  const root = await login(app, ROOT.username, ROOT.password)
  /** Calls the API as `who` (root by default) from {@link ADDRESS}, in English. */
  const call = async (method: Method, url: string, payload?: object, who: Session = root) => {
    const res = await app.inject({ method, url, remoteAddress: ADDRESS, headers: { ...who.headers, 'accept-language': 'en' }, ...(payload === undefined ? {} : { payload }) })
    return { status: res.statusCode, body: res.json(), headers: res.headers }
  }
  const ok = async (method: Method, url: string, payload?: object, who: Session = root) => {
    const res = await call(method, url, payload, who)
    if (res.body.success !== true) throw new Error(`${method} ${url}: ${res.status} ${res.body.message}`)
    return res.body.data
  }
  /** Every entry, oldest first, straight from the table. */
  const entries = async (): Promise<AuditLogView[]> =>
    await app.db.selectFrom('audit_logs').selectAll().orderBy('id').execute() as AuditLogView[]
  /** The entries written since the last call of `since()` (a cursor over the table). */
  let seen = 0
  const since = async (): Promise<AuditLogView[]> => {
    const rows = (await entries()).filter((e) => e.id > seen)
    if (rows.length > 0) seen = rows[rows.length - 1]!.id
    return rows
  }
  return { app, root, call, ok, entries, since }
}

/** The one entry an action wrote, checked to be the only one. */
async function only (t: Test, since: () => Promise<AuditLogView[]>, action: string): Promise<AuditLogView> {
  const rows = await since()
  t.equal(rows.length, 1, `exactly one entry for ${action}`)
  t.equal(rows[0]?.action, action)
  return rows[0]!
}

async function verify (app: FastifyInstance, who: Session, password: string): Promise<void> {
  const res = await app.inject({ method: 'POST', url: '/api/verify', headers: who.headers, payload: { method: 'password', value: password } })
  if (res.json().success !== true) throw new Error(`verification failed: ${res.body}`)
}

t.test('channel actions each write one entry with actor, address and the changed fields only; keys never', async (t) => {
  const { ok, since } = await setup(t)
  await since()
  const [created] = await ok('POST', '/api/channel/', { name: 'main', type: 1, key: 'sk-first-secret-1111', models: 'gpt-4o', proxy_url: 'http://bob:proxy-pass-999@10.0.0.9:3128' })
  const create = await only(t, since, 'channel.create')
  t.match(create, { actor_name: 'root', actor_role: 100, ip: ADDRESS, target_type: 'channel', target_id: String(created.id) })
  t.ok(create.actor_id > 0)
  t.same(create.changes.name, { after: 'main' })
  t.same(create.changes.key, { after: '[changed]' }, 'the key is only said to be set')
  t.same(create.changes.proxy_url, { after: 'http://bob@10.0.0.9:3128' }, 'the proxy address without its password')
  t.same(create.changes.proxy_password, { after: '[changed]' })

  await ok('PUT', '/api/channel/', { id: created.id, name: 'renamed', priority: 5, models: 'gpt-4o' })
  const update = await only(t, since, 'channel.update')
  t.same(update.changes, { name: { before: 'main', after: 'renamed' }, priority: { before: 0, after: 5 } }, 'only what changed')
  t.equal(update.note, '')

  await ok('PUT', '/api/channel/', { id: created.id, key: 'sk-second-secret-2222' })
  const key = await only(t, since, 'channel.update')
  t.equal(key.note, 'key changed')
  t.same(key.changes, { key: { before: '[changed]', after: '[changed]' } })

  await ok('PUT', '/api/channel/', { id: created.id, status: 2 })
  t.same((await only(t, since, 'channel.update')).changes, { status: { before: 1, after: 2 } }, 'a status change from the list')
  await ok('PUT', '/api/channel/', { id: created.id, status: 2, priority: 5 })
  t.same(await since(), [], 'a save that changes nothing writes nothing')

  await ok('PUT', '/api/channel/', { id: created.id, tag: 'team', header_override: '{"Authorization":"Bearer upstream-header-secret"}' })
  t.same((await only(t, since, 'channel.update')).changes.header_override, { before: '[changed]', after: '[changed]' }, 'header overrides are written as secrets')
  await ok('POST', '/api/channel/tag/enabled', { tag: 'team' })
  const tagStatus = await only(t, since, 'channel.tag.status')
  t.same(tagStatus.changes, { status: { before: 2, after: 1 } })
  t.equal(tagStatus.note, 'tag team')

  const [multi] = await ok('POST', '/api/channel/', { name: 'multi', type: 1, key: 'sk-multi-aaaa-1111\nsk-multi-bbbb-2222', models: 'gpt-4o' })
  await since()
  await ok('PUT', `/api/channel/${multi.id}/keys`, { index: 1, status: 2 })
  const keyStatus = await only(t, since, 'channel.key.status')
  t.same(keyStatus.changes, { status: { before: 1, after: 2 } })
  t.match(keyStatus.note, /^key 2 \([0-9a-f]{16}\)$/, 'the key is named by its number and fingerprint')

  const copy = await ok('POST', `/api/channel/copy/${multi.id}`)
  const copied = await only(t, since, 'channel.create')
  t.match(copied, { target_id: String(copy.id), note: `copy of channel ${multi.id}` })
  t.same(copied.changes.key, { after: '[changed]' })

  await ok('PUT', '/api/channel/tag', { tag: 'team', priority: 7 })
  const tagEdit = await only(t, since, 'channel.tag.update')
  t.same(tagEdit.changes, { priority: { before: 5, after: 7 } })

  await ok('PUT', '/api/channel/', { id: multi.id, status: 2 })
  await ok('PUT', '/api/channel/', { id: copy.id, status: 2 })
  await since()
  await ok('DELETE', '/api/channel/disabled')
  const swept = await since()
  t.same(swept.map((e) => `${e.action} ${e.target_id}`).sort(), [`channel.delete ${copy.id}`, `channel.delete ${multi.id}`].sort(), 'one entry per channel deleted with the disabled ones')
  t.equal(swept[0]!.note, 'deleted with the disabled channels')

  await ok('DELETE', `/api/channel/${created.id}/`)
  const del = await only(t, since, 'channel.delete')
  t.equal(del.target_id, String(created.id))
  t.same(del.changes.name, { before: 'renamed' })
  t.notOk('after' in del.changes.name!)

})

t.test('no channel key, password, proxy password or header secret is ever stored in an entry', async (t) => {
  const { ok, entries } = await setup(t)
  const [c] = await ok('POST', '/api/channel/', { name: 'c', type: 1, key: 'sk-first-secret-1111', models: 'gpt-4o', proxy_url: 'http://u:proxy-pass-999@10.0.0.9:3128' })
  await ok('PUT', '/api/channel/', { id: c.id, key: 'sk-second-secret-2222', header_override: '{"Authorization":"Bearer upstream-header-secret"}' })
  const u = await ok('POST', '/api/user/', { username: 'dora', password: 'first-password-1' })
  await ok('PUT', '/api/user/', { id: u.id, password: 'second-password-2' })
  await ok('DELETE', `/api/channel/${c.id}`)
  const text = JSON.stringify(await entries())
  for (const secret of ['sk-first-secret-1111', 'sk-second-secret-2222', 'proxy-pass-999', 'upstream-header-secret', 'first-password-1', 'second-password-2', '$argon2']) {
    t.notOk(text.includes(secret), `${secret} is not in the audit trail`)
  }
})

t.test('user actions: create, update (role, status, quota, group, password), manage', async (t) => {
  const { app, ok, call, since } = await setup(t)
  const admin = await userSession(app, 'adm', ROLES.admin)
  await since()
  const u = await ok('POST', '/api/user/', { username: 'erin', password: 'erin-password-1' }, admin)
  const create = await only(t, since, 'user.create')
  t.match(create, { actor_name: 'adm', actor_role: ROLES.admin, actor_id: admin.user.id, target_type: 'user', target_id: String(u.id), ip: ADDRESS })
  t.same(create.changes.username, { after: 'erin' })
  t.same(create.changes.password, { after: '[changed]' })

  await ok('PUT', '/api/user/', { id: u.id, quota: 5000, group: 'vip', display_name: 'erin', password: 'erin-password-2' })
  const update = await only(t, since, 'user.update')
  t.same(update.changes, {
    quota: { before: 0, after: 5000 },
    group: { before: 'default', after: 'vip' },
    password: { before: '[changed]', after: '[changed]' }
  }, 'the display name was unchanged and is not recorded')

  for (const [action, field, before, after] of [
    ['disable', 'status', 1, 2], ['enable', 'status', 2, 1], ['promote', 'role', 1, 10], ['demote', 'role', 10, 1], ['delete', 'deleted', false, true]
  ] as const) {
    await ok('POST', '/api/user/manage', { id: u.id, action })
    t.same((await only(t, since, `user.${action}`)).changes, { [field]: { before, after } }, action)
  }

  const refused = await call('POST', '/api/user/manage', { id: 1, action: 'disable' }, admin)
  t.equal(refused.body.success, false, 'an admin cannot disable root')
  const forbidden = await call('POST', '/api/user/manage', { id: admin.user.id, action: 'disable' }, admin)
  t.equal(forbidden.status, 403, 'nor itself')
  t.same(await since(), [], 'a refused action writes nothing')
})

t.test('redemption codes: create, update, status, delete; the code itself is never written', async (t) => {
  const { ok, since, entries } = await setup(t)
  await since()
  const keys: string[] = await ok('POST', '/api/redemption/', { name: 'promo', quota: 1000, count: 2 })
  const created = await since()
  t.equal(created.length, 2, 'one entry per code')
  t.same(created.map((e) => e.action), ['redemption.create', 'redemption.create'])
  t.same(created[0]!.changes, { name: { after: 'promo' }, quota: { after: 1000 }, status: { after: 1 } })
  const id = Number(created[0]!.target_id)
  await ok('PUT', '/api/redemption/', { id, name: 'promo2', quota: 1000 })
  t.same((await only(t, since, 'redemption.update')).changes, { name: { before: 'promo', after: 'promo2' } })
  await ok('PUT', '/api/redemption/?status_only=true', { id, status: 2 })
  t.same((await only(t, since, 'redemption.update')).changes, { status: { before: 1, after: 2 } })
  await ok('DELETE', `/api/redemption/${id}/`)
  t.same((await only(t, since, 'redemption.delete')).changes, { name: { before: 'promo2' }, quota: { before: 1000 }, status: { before: 2 } })
  const text = JSON.stringify(await entries())
  for (const key of keys) t.notOk(text.includes(key), 'no code in the trail')
})

t.test('options and prices: name, before and after; credentials only as [changed]', async (t) => {
  const { app, root, ok, since, entries } = await setup(t)
  await since()
  await ok('PUT', '/api/option/', { key: 'DisplayTokenStatEnabled', value: 'false' })
  const plain = await only(t, since, 'option.update')
  t.match(plain, { target_type: 'option', target_id: 'DisplayTokenStatEnabled' })
  t.same(plain.changes, { DisplayTokenStatEnabled: { before: 'true', after: 'false' } }, 'named like a token, but no credential')

  const ratios = JSON.parse(OPTION_DEFAULTS.ModelRatio) as Record<string, number>
  const model = Object.keys(ratios)[0]!
  await ok('PUT', '/api/option/', { key: 'ModelRatio', value: JSON.stringify({ ...ratios, [model]: 42, 'brand-new-model': 3 }) })
  t.same((await only(t, since, 'option.update')).changes, { ModelRatio: { before: { [model]: ratios[model] }, after: { [model]: 42, 'brand-new-model': 3 } } }, 'a price edit records the prices that changed')

  await verify(app, root, ROOT.password)
  await ok('PUT', '/api/option/', { key: 'SMTPToken', value: 'smtp-secret-value-1' })
  t.same((await only(t, since, 'option.update')).changes, { SMTPToken: { before: '[changed]', after: '[changed]' } })
  await ok('PUT', '/api/option/', { key: 'SMTPToken', value: '' })
  t.same(await since(), [], 'the blank a form sends back keeps the credential and writes nothing')
  await ok('PUT', '/api/option/', { key: 'SMTPToken', value: 'smtp-secret-value-2' })
  t.same((await only(t, since, 'option.update')).changes, { SMTPToken: { before: '[changed]', after: '[changed]' } })
  await ok('PUT', '/api/option/', { key: 'SMTPToken', value: '', clear: true })
  const cleared = await only(t, since, 'option.update')
  t.equal(cleared.note, 'cleared')

  await ok('POST', '/api/option/rest_model_ratio')
  const reset = await since()
  t.same(reset.map((e) => `${e.action} ${e.target_id} ${e.note}`), ['option.update ModelRatio prices reset to the defaults'], 'only the price table that differed')
  t.same(reset[0]!.changes, { ModelRatio: { before: { [model]: 42, 'brand-new-model': 3 }, after: { [model]: ratios[model] } } })

  const text = JSON.stringify(await entries())
  t.notOk(text.includes('smtp-secret-value'), 'no option secret in the trail')
  const api = await app.inject({ url: '/api/audit/?page_size=100', headers: root.headers })
  t.notOk(api.body.includes('smtp-secret-value'), 'nor in the API')
  const csv = await app.inject({ url: '/api/audit/export', headers: root.headers })
  t.notOk(csv.body.includes('smtp-secret-value'), 'nor in the CSV')
})

t.test('clearing logs is recorded', async (t) => {
  const { ok, since } = await setup(t)
  await since()
  await ok('DELETE', '/api/log/?target_timestamp=1000')
  t.same((await only(t, since, 'log.delete')).changes, { target_timestamp: { after: 1000 }, removed: { after: 0 } })
})

t.test('the list: envelope, filters, pagination, newest first', async (t) => {
  const { app, ok, call } = await setup(t)
  const admin = await userSession(app, 'adm', ROLES.admin)
  const [a] = await ok('POST', '/api/channel/', { name: 'a', type: 1, key: 'sk-aaaa-1111', models: 'm' })
  for (let i = 1; i <= 4; i++) await ok('PUT', '/api/channel/', { id: a.id, priority: i })
  await ok('POST', '/api/channel/', { name: 'b', type: 1, key: 'sk-bbbb-2222', models: 'm' }, admin)
  await ok('PUT', '/api/option/', { key: 'SystemName', value: 'Gate' })
  // One old entry, written as it would have been a year ago (into the default partition).
  await app.db.insertInto('audit_logs').values({ created_at: 1_000_000_000, actor_id: 1, actor_name: 'root', actor_role: 100, action: 'option.update', target_type: 'option', target_id: 'Notice' }).execute()

  const page1 = await ok('GET', '/api/audit/?p=1&page_size=3')
  t.same(Object.keys(page1).sort(), ['items', 'page', 'page_size', 'total'], 'the list envelope of the console')
  t.equal(page1.total, 8)
  t.equal(page1.page_size, 3)
  t.same(page1.items.map((e: AuditLogView) => e.action), ['option.update', 'channel.create', 'channel.update'], 'newest first')
  const page3 = await ok('GET', '/api/audit/?p=3&page_size=3')
  t.equal(page3.items.length, 2)
  t.equal(page3.items[1].created_at, 1_000_000_000, 'the oldest last')

  t.equal((await ok('GET', '/api/audit/?actor=adm')).total, 1, 'by actor name')
  t.equal((await ok('GET', `/api/audit/?actor=${admin.user.id}`)).total, 1, 'by actor id')
  t.equal((await ok('GET', '/api/audit/?action=channel.update')).total, 4, 'by action')
  t.equal((await ok('GET', '/api/audit/?target_type=option')).total, 2, 'by target type')
  t.equal((await ok('GET', `/api/audit/?target_type=channel&target_id=${a.id}`)).total, 5, 'by target')
  t.equal((await ok('GET', '/api/audit/?start_timestamp=999999999&end_timestamp=1000000001')).total, 1, 'by time range')
  t.equal((await ok('GET', '/api/audit/?end_timestamp=1000000000')).total, 0, 'the end is exclusive')
  t.equal((await ok('GET', '/api/audit/?actor=&action=&target_type=&target_id=&start_timestamp=&end_timestamp=')).total, 8, 'blank filters do not filter')
  const item = (await ok('GET', '/api/audit/?action=channel.create&actor=root')).items[0]
  t.match(item, { id: Number, created_at: Number, actor_id: Number, actor_name: 'root', actor_role: 100, ip: ADDRESS, action: 'channel.create', target_type: 'channel', target_id: String(a.id), note: '' })
  t.equal((await call('GET', '/api/audit/?start_timestamp=abc')).status, 400, 'a malformed filter is refused')
})

t.test('the CSV export: same filters, every cell neutralised', async (t) => {
  const { app, root, ok } = await setup(t)
  await ok('POST', '/api/channel/', { name: '=HYPERLINK("http://evil")', type: 1, key: 'sk-cccc-3333', models: 'm', tag: '+tag' })
  await ok('PUT', '/api/option/', { key: 'SystemName', value: '-2+3' })
  const all = await app.inject({ url: '/api/audit/export', headers: root.headers })
  t.equal(all.statusCode, 200)
  t.match(all.headers['content-type'], /^text\/csv/)
  t.match(all.headers['content-disposition'], /^attachment; filename="audit-\d{4}-\d{2}-\d{2}\.csv"$/)
  const lines = all.body.trim().split('\r\n')
  t.equal(lines[0], 'id,time,actor_id,actor_name,actor_role,ip,action,target_type,target_id,changes,note')
  t.equal(lines.length, 3, 'a header and two entries')
  const channelOnly = await app.inject({ url: '/api/audit/export?target_type=channel', headers: root.headers })
  t.equal(channelOnly.body.trim().split('\r\n').length, 2, 'the filters apply')

  // A note that starts a formula is neutralised as a whole cell.
  const req = { auth: { user: { id: 1, username: '=cmd', role: 100 } }, ip: '@1.2.3.4' } as never
  await recordAudit(app, req, { action: '+action', targetType: '-type', targetId: '\tid', note: '=HYPERLINK("x")' })
  const csv = (await app.inject({ url: '/api/audit/export?action=%2Baction', headers: root.headers })).body
  const row = csv.trim().split('\r\n')[1]!
  t.equal(row.split(',').slice(3, 9).join(','), "'=cmd,100,'@1.2.3.4,'+action,'-type,'\tid", 'each cell that could start a formula is quoted')
  t.match(row, /"'=HYPERLINK\(""x""\)"$/, 'the note too, quoted as CSV')
  t.notMatch(all.body, /(^|,)[=+\-@]/m, 'no cell of the export starts a formula')
})

t.test('only root reads the trail; nobody edits or deletes it', async (t) => {
  const { app, root, call } = await setup(t)
  const admin = await userSession(app, 'adm', ROLES.admin)
  const user = await userSession(app, 'usr')
  for (const who of [admin, user]) {
    t.equal((await call('GET', '/api/audit/', undefined, who)).status, 403, `role ${who.user.role}: list`)
    t.equal((await call('GET', '/api/audit/export', undefined, who)).status, 403, `role ${who.user.role}: export`)
  }
  t.equal((await app.inject({ url: '/api/audit/' })).statusCode, 401, 'signed out')

  await call('PUT', '/api/option/', { key: 'SystemName', value: 'Gate' })
  const [entry] = await app.db.selectFrom('audit_logs').selectAll().execute()
  for (const method of ['PUT', 'DELETE', 'PATCH', 'POST'] as const) {
    for (const url of ['/api/audit/', `/api/audit/${entry!.id}`, '/api/audit/export']) {
      const res = await call(method, url, method === 'DELETE' ? undefined : { note: 'x' }, root)
      t.ok([404, 405].includes(res.status), `${method} ${url}: ${res.status}`)
    }
  }
  const routes = app.routeAccess.filter((r) => r.url.startsWith('/api/audit'))
  t.same(routes.map((r) => `${r.method} ${r.url} ${r.auth}`).sort(), ['GET /api/audit root', 'GET /api/audit/export root'], 'two read routes, root only')
  const after = await app.db.selectFrom('audit_logs').selectAll().where('id', '=', entry!.id).executeTakeFirstOrThrow()
  t.same(after, entry, 'the entry is unchanged')
  await t.rejects(app.db.updateTable('audit_logs').set({ note: 'x' }).execute(), /append-only/, 'the table refuses updates')
  await t.rejects(app.db.deleteFrom('audit_logs').execute(), /append-only/, 'and deletes')
})

t.test('an entry written in the caller\'s transaction goes with it', async (t) => {
  const { app } = await setup(t)
  const req = { auth: { user: { id: 1, username: 'root', role: 100 } }, ip: '10.1.2.3' } as never
  await t.rejects(app.db.transaction().execute(async (trx) => {
    await recordAudit(app, req, { action: 'test.rollback', targetType: 'test' }, trx)
    throw new Error('the change failed')
  }))
  await app.db.transaction().execute(async (trx) => {
    await recordAudit(app, req, { action: 'test.commit', targetType: 'test' }, trx)
  })
  const rows = await app.db.selectFrom('audit_logs').select(['action', 'ip', 'actor_name']).execute()
  t.same(rows, [{ action: 'test.commit', ip: '10.1.2.3', actor_name: 'root' }])
})

t.test('secret fields are replaced by name, also inside objects', async (t) => {
  t.same(auditChanges({
    before: { name: 'a', api_key: 'k1', settings: { region: 'eu', client_secret: 's1' }, totp_secret: 'x', backup_codes: ['1', '2'], same: 1 },
    after: { name: 'b', api_key: 'k1', settings: { region: 'us', client_secret: 's1' }, totp_secret: 'y', backup_codes: ['3'], same: 1 }
  }), {
    name: { before: 'a', after: 'b' },
    settings: { before: { region: 'eu', client_secret: '[unchanged]' }, after: { region: 'us', client_secret: '[unchanged]' } },
    totp_secret: { before: '[changed]', after: '[changed]' },
    backup_codes: { before: '[changed]', after: '[changed]' }
  }, 'unchanged fields are left out; a secret beside a change is [unchanged]')
  t.same(auditChanges({ before: { password: 'a', Token: 'b', accessCode: 'c' }, after: { password: 'b', Token: 'b', accessCode: 'd' } }), {
    password: { before: '[changed]', after: '[changed]' },
    accessCode: { before: '[changed]', after: '[changed]' }
  })
  t.same(auditChanges({ after: { key: 'sk-x', name: 'n' } }), { key: { after: '[changed]' }, name: { after: 'n' } }, 'a create')
  t.same(auditChanges({ before: { EpayKey: 'k' }, after: { EpayKey: 'l' }, secretFields: ['EpayKey'] }), { EpayKey: { before: '[changed]', after: '[changed]' } })
  t.same(auditChanges({ before: { TurnstileSiteKey: 'a' }, after: { TurnstileSiteKey: 'b' }, plainFields: ['TurnstileSiteKey'] }), { TurnstileSiteKey: { before: 'a', after: 'b' } })
})

t.test('a month made late takes its entries out of the default partition', async (t) => {
  const { app } = await setup(t)
  const may2035 = Date.UTC(2035, 4, 10) / 1000
  await app.db.insertInto('audit_logs').values({ created_at: may2035, actor_id: 1, actor_name: 'root', actor_role: 100, action: 'option.update', target_type: 'option' }).execute()
  const where = async () => (await sql<{ part: string }>`select tableoid::regclass::text as part from audit_logs where created_at = ${may2035}`.execute(app.db)).rows.map((r) => r.part)
  t.same(await where(), ['audit_logs_default'])
  t.equal(await ensureAuditLogPartitions(app.db, new Date(may2035 * 1000), 0), 2, 'April and May 2035')
  t.same(await where(), ['audit_logs_203505'], 'moved, despite the append-only guard')
  await t.rejects(sql`delete from audit_logs_default`.execute(app.db).then(async () => await sql`delete from audit_logs_203505`.execute(app.db)), /append-only/, 'which still holds outside the move')
})
