import { configChannel, type ConfigChange, ROLES } from '@modelgate/contracts'
import { defaultModelsByType } from '@modelgate/providers'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { build, login, ROOT, sharedEnv, userSession } from './helpers.js'

async function setup (t: Test) {
  const env = await sharedEnv(t)
  const app = await build(t, {}, env)
  const root = await login(app, ROOT.username, ROOT.password)
  const headers = { ...root.headers, 'accept-language': 'en' }
  /** Calls the API as root, in English. */
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    (await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })).json()
  /** Creates one channel (defaults filled in) and returns its view. */
  const create = async (fields: Record<string, unknown> = {}) => {
    const res = await call('POST', '/api/channel/', { name: 'ch', type: 1, key: 'sk-upstream', models: 'gpt-4o', ...fields })
    if (res.success !== true) throw new Error(`create failed: ${res.message}`)
    return res.data[0]
  }
  return { app, env, call, create }
}

/** The routing index as `channel|group|model|enabled|priority|weight|tag` lines, sorted. */
async function abilities (app: FastifyInstance): Promise<string[]> {
  const rows = await app.db.selectFrom('abilities').selectAll().execute()
  return rows.map((a) => `${a.channel_id}|${a.group}|${a.model}|${a.enabled ? 'on' : 'off'}|${a.priority}|${a.weight}|${a.tag ?? ''}`).sort()
}

t.test('creates a channel with the defaults, its key sealed at rest, its abilities built', async (t) => {
  const { app, call, create } = await setup(t)
  const res = await call('POST', '/api/channel/', {
    name: ' main ', type: 1, key: ' sk-one \n', models: 'gpt-4o, gpt-4o-mini,gpt-4o,', base_url: 'https://api.example.com//', model_mapping: '{"gpt-4o":"gpt-4o-2024-08-06","x":""}'
  })
  t.equal(res.success, true)
  t.equal(res.message, 'Channel created')
  const c = res.data[0]
  t.match(c, {
    name: 'main', type: 1, models: 'gpt-4o,gpt-4o-mini', group: 'default', auto_ban: 1, priority: 0, weight: 0, status: 1, tag: null,
    base_url: 'https://api.example.com', other: '', response_time: 0, test_time: 0, other_info: {}
  })
  t.same(JSON.parse(c.model_mapping), { 'gpt-4o': 'gpt-4o-2024-08-06' }, 'a redirect row with a blank side is dropped')
  t.notOk('key' in c, 'the answer carries no key')
  const row = await app.db.selectFrom('channels').select('key').where('id', '=', c.id).executeTakeFirstOrThrow()
  t.not(row.key, 'sk-one')
  t.notMatch(row.key, /sk-one/, 'the stored key is not the key')
  t.equal(app.secrets.open(row.key), 'sk-one', 'the control plane opens it back')
  t.same(await abilities(app), [`${c.id}|default|gpt-4o|on|0|0|`, `${c.id}|default|gpt-4o-mini|on|0|0|`].sort())

  const detail = await app.inject({ url: `/api/channel/${c.id}`, headers: (await login(app, ROOT.username, ROOT.password)).headers })
  t.notOk('key' in detail.json().data, 'the detail never carries the key (test/channel-key-reveal.test.ts)')
  t.equal(detail.json().data.key_hint, '…ne', 'only its hint: the last 2 characters of a short key')

  t.equal((await create({ type: 3 })).other, '2023-06-01-preview', 'Azure gets a default API version')
  t.equal((await create({ type: 3, other: '2024-10-21' })).other, '2024-10-21', 'a given version is kept')
  t.equal((await create({ type: 18 })).other, 'v2.1', 'Spark gets a default version')
  const shaped = await create({ weight: -5, priority: -999, groups: ['vip', 'default', 'vip', ' '], models: ['a', 'b,c', 'a'], auto_ban: false, tag: '  ', openai_organization: '', test_model: 'b' })
  t.match(shaped, { weight: 0, priority: -999, group: 'vip,default', models: 'a,b,c', auto_ban: 0, tag: null, openai_organization: null, test_model: 'b' })
  t.equal((await create({ group: 'svip' })).group, 'svip', '`group` is accepted as well as `groups`')
})

t.test('batch mode creates one channel per key line; otherwise the lines make one multi-key channel', async (t) => {
  const { app, call } = await setup(t)
  const batch = await call('POST', '/api/channel/', { name: 'pool', type: 1, key: 'sk-a\n\n sk-b \nsk-c\n', models: 'm1', groups: 'default,vip', mode: 'batch' })
  t.equal(batch.success, true)
  t.equal(batch.message, '3 channels created')
  t.equal(batch.data.length, 3)
  const keys = await app.db.selectFrom('channels').select(['id', 'key']).orderBy('id').execute()
  t.same(keys.map((k) => app.secrets.open(k.key)), ['sk-a', 'sk-b', 'sk-c'])
  t.equal((await abilities(app)).length, 6, 'each channel serves both groups')

  const multi = await call('POST', '/api/channel/', { name: 'multi', type: 1, key: 'sk-x\nsk-y\nsk-x', models: 'm1' })
  t.equal(multi.data.length, 1)
  const row = await app.db.selectFrom('channels').select('key').where('id', '=', multi.data[0].id).executeTakeFirstOrThrow()
  t.equal(app.secrets.open(row.key), 'sk-x\nsk-y', 'one channel, one key per line, duplicates dropped')

  const flag = await call('POST', '/api/channel/', { name: 'flag', type: 1, key: 'k1\nk2', models: 'm1', batch: true })
  t.equal(flag.data.length, 2, '`batch: true` works too')
  const sa = await call('POST', '/api/channel/', { name: 'vertex', type: 41, key: '{\n  "type": "service_account",\n  "project_id": "p"\n}', models: 'gemini-1.5-pro' })
  const saRow = await app.db.selectFrom('channels').select('key').where('id', '=', sa.data[0].id).executeTakeFirstOrThrow()
  t.same(JSON.parse(app.secrets.open(saRow.key)), { type: 'service_account', project_id: 'p' }, 'a JSON key stays one credential')
})

t.test('copying makes a new channel with the same settings and key, fresh counters and status', async (t) => {
  const { app, call, create } = await setup(t)
  const original = await create({ name: 'orig', key: 'sk-a\nsk-b', models: 'm1,m2', groups: 'vip', priority: 4, weight: 2, tag: 't', model_mapping: '{"m1":"m1-x"}', test_model: 'm2', auto_ban: 0 })
  await call('PUT', '/api/channel/', { id: original.id, status: 2 })
  await app.db.updateTable('channels').set({ used_quota: 500, response_time: 321 }).where('id', '=', original.id).execute()
  const loaded = (await call('GET', `/api/channel/${original.id}`)).data
  const copy = await call('POST', `/api/channel/copy/${original.id}`)
  t.equal(copy.success, true)
  const c = copy.data
  t.not(c.id, original.id)
  t.match(c, { name: 'orig copy', models: 'm1,m2', group: 'vip', priority: 4, weight: 2, tag: 't', test_model: 'm2', auto_ban: 0, status: 1, used_quota: 0, response_time: 0, other_info: {}, key_count: 2 })
  t.equal(c.model_mapping, loaded.model_mapping)
  const sealed = await app.db.selectFrom('channels').select('key').where('id', '=', c.id).executeTakeFirstOrThrow()
  t.equal(app.secrets.open(sealed.key), 'sk-a\nsk-b', 'the key is copied')
  t.same(await abilities(app).then((a) => a.filter((l) => l.startsWith(`${c.id}|`))), [`${c.id}|vip|m1|on|4|2|t`, `${c.id}|vip|m2|on|4|2|t`], 'with its routing rows')
})

t.test('refuses invalid channels with a message in the caller\'s language', async (t) => {
  const { app, call } = await setup(t)
  const base = { name: 'ch', type: 1, key: 'sk-x', models: 'gpt-4o' }
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ name: '  ' }, 'Please fill in the channel name'],
    [{ groups: [] }, 'Please choose at least one group'],
    [{ groups: ' , ' }, 'Please choose at least one group'],
    [{ models: '' }, 'Please choose at least one model'],
    [{ models: [' '] }, 'Please choose at least one model'],
    [{ key: ' \n ' }, 'Please fill in the key'],
    [{ key: undefined }, 'Please fill in the key'],
    [{ type: 999 }, 'Unknown channel type 999'],
    [{ base_url: 'ftp://files.example.com' }, 'The base URL must be an http:// or https:// address'],
    [{ base_url: 'api.example.com' }, 'The base URL must be an http:// or https:// address'],
    [{ model_mapping: '{"a": ' }, 'The model redirect must be a valid JSON object'],
    [{ model_mapping: '["a"]' }, 'The model redirect must be a valid JSON object'],
    [{ model_mapping: '{"a": 1}' }, 'The model redirect must map model names to model names'],
    [{ status_code_mapping: '{"400": "bad"}' }, 'The status code mapping must be a valid JSON object of HTTP status codes'],
    [{ status_code_mapping: 'null' }, 'The status code mapping must be a valid JSON object of HTTP status codes'],
    [{ setting: '[1]' }, 'The extra setting must be a valid JSON object'],
    [{ proxy_url: 'ftp://proxy' }, 'The proxy URL must be an http://, https://, socks5:// or socks5h:// address'],
    [{ priority: -1000 }, 'The priority must be an integer of at least -999']
  ]
  for (const [fields, message] of cases) {
    const res = await call('POST', '/api/channel/', { ...base, ...fields })
    t.same(res, { success: false, message }, JSON.stringify(fields))
  }
  const zh = await app.inject({ method: 'POST', url: '/api/channel/', headers: { ...(await login(app, ROOT.username, ROOT.password)).headers }, payload: { ...base, name: '' } })
  t.same(zh.json(), { success: false, message: '请填写渠道名称' }, 'Chinese by default')
  const accepted = await call('POST', '/api/channel/', { ...base, status_code_mapping: '{"429": 503}', setting: '{"a":1}', proxy_url: 'socks5://127.0.0.1:1080', base_url: 'https://x.example.com/{model}/' })
  t.match(accepted.data[0], { base_url: 'https://x.example.com/{model}', setting: '{"a":1}', proxy_url: 'socks5://127.0.0.1:1080' })
  t.same(JSON.parse(accepted.data[0].status_code_mapping), { 429: '503' })
  t.equal(await app.db.selectFrom('channels').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow().then((r) => Number(r.n)), 1, 'nothing refused was stored')
})

t.test('the edit form keeps absent fields and a blank key; abilities follow every change', async (t) => {
  const { app, call, create } = await setup(t)
  const c = await create({ key: 'sk-original', models: 'a,b', groups: 'default' })
  const other = await create({ models: 'z' })
  const res = await call('PUT', '/api/channel/', { id: c.id, name: 'renamed', key: '  ', models: 'b,c', groups: ['vip', 'default'], priority: 5, weight: 3, tag: 'blue', response_time: 99, other_info: {} })
  t.equal(res.success, true)
  t.equal(res.message, 'Channel updated')
  t.match(res.data, { name: 'renamed', models: 'b,c', group: 'vip,default', priority: 5, weight: 3, tag: 'blue', response_time: 0, type: 1 })
  const key = async () => app.secrets.open((await app.db.selectFrom('channels').select('key').where('id', '=', c.id).executeTakeFirstOrThrow()).key)
  t.equal(await key(), 'sk-original', 'a blank key keeps the stored one')
  t.same(await abilities(app), [
    `${c.id}|default|b|on|5|3|blue`, `${c.id}|default|c|on|5|3|blue`, `${c.id}|vip|b|on|5|3|blue`, `${c.id}|vip|c|on|5|3|blue`,
    `${other.id}|default|z|on|0|0|`
  ], 'the old models are gone, the other channel untouched')

  await call('PUT', '/api/channel/', { id: c.id, key: 'sk-new1\nsk-new2' })
  t.equal(await key(), 'sk-new1\nsk-new2', 'a new key replaces the old')
  const azure = await call('PUT', '/api/channel/', { id: c.id, type: 3, other: '', key: 'sk-azure' })
  t.equal(azure.data.other, '2023-06-01-preview', 'changing the type applies its default')

  t.same(await call('PUT', '/api/channel/', { id: c.id, models: '' }), { success: false, message: 'Please choose at least one model' })
  t.same(await call('PUT', '/api/channel/', { id: c.id, name: 'x', status: 3 }), { success: false, message: 'The status can only be set to 1 (enabled) or 2 (disabled)' })
  t.same(await call('PUT', '/api/channel/', { id: 9999, name: 'x' }), { success: false, message: 'Channel not found, refresh and retry' })
  const disabled = await call('PUT', '/api/channel/', { id: c.id, name: 'off', status: 2 })
  t.equal(disabled.data.status, 2, 'the form may disable')
  t.ok((await abilities(app)).filter((a) => a.startsWith(`${c.id}|`)).every((a) => a.includes('|off|')))
})

t.test('inline edits set status, priority or weight alone', async (t) => {
  const { app, call, create } = await setup(t)
  const c = await create({ models: 'a', groups: 'default,vip', name: 'inline' })
  const off = await call('PUT', '/api/channel/', { id: c.id, status: 2 })
  t.match(off, { success: true, data: { id: c.id, status: 2, name: 'inline', other_info: { status_reason: 'disabled by admin root' } } })
  t.ok(off.data.other_info.status_time > 0)
  t.same(await abilities(app), [`${c.id}|default|a|off|0|0|`, `${c.id}|vip|a|off|0|0|`], 'a disabled channel routes nothing')
  t.same(await call('PUT', '/api/channel/', { id: c.id, status: 3 }), { success: false, message: 'The status can only be set to 1 (enabled) or 2 (disabled)' }, 'auto-disabled is the system\'s')
  t.same(await call('PUT', '/api/channel/', { id: c.id, priority: -1000 }), { success: false, message: 'The priority must be an integer of at least -999' })
  t.equal((await call('PUT', '/api/channel/', { id: c.id, priority: -999 })).data.priority, -999)
  t.equal((await call('PUT', '/api/channel/', { id: c.id, weight: -4 })).data.weight, 0, 'a negative weight becomes 0')
  t.equal((await call('PUT', '/api/channel/', { id: c.id, weight: 7 })).data.weight, 7)
  t.same(await call('PUT', '/api/channel/', { id: c.id }), { success: false, message: 'Nothing was changed' })
  const on = await call('PUT', '/api/channel/', { id: c.id, status: 1 })
  t.equal(on.data.status, 1)
  t.same(await abilities(app), [`${c.id}|default|a|on|-999|7|`, `${c.id}|vip|a|on|-999|7|`])
  t.same(await call('PUT', '/api/channel/', { id: 4242, status: 1 }), { success: false, message: 'Channel not found, refresh and retry' })
})

t.test('concurrent edits of one channel leave its abilities matching its final row', async (t) => {
  const { app, call, create } = await setup(t)
  const c = await create({ models: 'a' })
  const edits = Array.from({ length: 24 }, (_, i) => i % 2 === 0
    ? { id: c.id, models: `m${i},shared`, groups: i % 4 === 0 ? 'default' : 'default,vip', priority: i }
    : { id: c.id, status: i % 3 === 0 ? 2 : 1 })
  const answers = await Promise.all(edits.map(async (edit) => await call('PUT', '/api/channel/', edit)))
  t.ok(answers.every((a) => a.success === true), 'every edit succeeds')
  const row = await app.db.selectFrom('channels').selectAll().where('id', '=', c.id).executeTakeFirstOrThrow()
  const expected = row.group.split(',').flatMap((g) => row.models.split(',').map((m) => `${c.id}|${g}|${m}|${row.status === 1 ? 'on' : 'off'}|${row.priority}|0|`))
  t.same(await abilities(app), expected.sort())
})

t.test('deletes one channel or every disabled one; fix rebuilds the routing index', async (t) => {
  const { app, call, create } = await setup(t)
  const keep = await create({ models: 'a,b' })
  const gone = await create({ models: 'c' })
  const manual = await create({ models: 'd' })
  const auto = await create({ models: 'e' })
  await call('PUT', '/api/channel/', { id: manual.id, status: 2 })
  await app.db.updateTable('channels').set({ status: 3 }).where('id', '=', auto.id).execute()
  const del = await call('DELETE', `/api/channel/${gone.id}/`)
  t.same(del, { success: true, message: 'Channel deleted', data: null })
  t.same(await call('DELETE', `/api/channel/${gone.id}`), { success: false, message: 'Channel not found, refresh and retry' })
  t.notOk((await abilities(app)).some((a) => a.startsWith(`${gone.id}|`)), 'its abilities went with it')
  const disabled = await call('DELETE', '/api/channel/disabled')
  t.same(disabled, { success: true, message: '2 disabled channels deleted', data: 2 })
  t.same((await app.db.selectFrom('channels').select('id').execute()).map((r) => r.id), [keep.id])

  // A damaged index: a row lost, a stale one left, a wrong flag.
  const other = await create({ models: 'x', groups: 'vip' })
  await app.db.deleteFrom('abilities').where('model', '=', 'a').execute()
  await app.db.insertInto('abilities').values({ group: 'default', model: 'stale', channel_id: keep.id, enabled: true, tag: null }).execute()
  await app.db.updateTable('abilities').set({ enabled: false }).where('channel_id', '=', other.id).execute()
  const fixed = await call('POST', '/api/channel/fix')
  t.same(fixed, { success: true, message: 'Routing rebuilt for 2 channels', data: 2 })
  t.same(await abilities(app), [`${keep.id}|default|a|on|0|0|`, `${keep.id}|default|b|on|0|0|`, `${other.id}|vip|x|on|0|0|`])
})

t.test('lists page without keys, by priority or id, and group tags into one row', async (t) => {
  const { app, call, create } = await setup(t)
  const a = await create({ name: 'a', priority: 1, key: 'sk-aaaa-secret' })
  const b = await create({ name: 'b', priority: 5, tag: 'team', weight: 2 })
  const c = await create({ name: 'c', priority: 5, key: 'sk-cccc-secret' })
  const d = await create({ name: 'd', priority: 0, tag: 'team', weight: 2, groups: 'vip', models: 'o3' })
  const e = await create({ name: 'e', priority: 3, tag: 'solo' })
  const ids = (items: Array<{ id?: number, tag?: string }>) => items.map((i) => i.id ?? `tag:${i.tag}`)

  const res = await app.inject({ url: '/api/channel/?p=1&page_size=3', headers: (await login(app, ROOT.username, ROOT.password)).headers })
  t.notMatch(res.body, /secret|sk-upstream|"key"/, 'a list never carries a key')
  const page1 = res.json().data
  t.same({ page: page1.page, page_size: page1.page_size, total: page1.total }, { page: 1, page_size: 3, total: 5 })
  t.same(ids(page1.items), [c.id, b.id, e.id], 'priority descending, then id descending')
  t.same(ids((await call('GET', '/api/channel/?p=2&page_size=3')).data.items), [a.id, d.id])
  t.same(ids((await call('GET', '/api/channel/?id_sort=true&page_size=10')).data.items), [e.id, d.id, c.id, b.id, a.id], 'id_sort: newest first')

  const tagged = (await call('GET', '/api/channel/?tag_mode=true&page_size=2')).data
  t.equal(tagged.total, 4, 'a tag counts as one row')
  t.same(ids(tagged.items), ['tag:team', c.id], 'a tag row sits at its highest priority, then its newest id')
  const team = tagged.items[0]
  t.match(tagged.items[1], { id: c.id, name: 'c', priority: 5, models: 'gpt-4o', group: 'default', other_info: {} }, 'a plain row is a whole channel view')
  t.notOk('children' in tagged.items[1])
  t.same(team.children.map((x: { id: number }) => x.id), [b.id, d.id])
  t.match(team, { tag: 'team', status: 1, enabled_count: 2, type: 1, priority: null, weight: 2, group: 'default,vip', models: 'gpt-4o,o3' })
  t.notOk('key' in team.children[0])
  t.same(ids((await call('GET', '/api/channel/?tag_mode=true&page_size=2&p=2')).data.items), ['tag:solo', a.id])
  await call('PUT', '/api/channel/', { id: d.id, status: 2 })
  const idSorted = (await call('GET', '/api/channel/?tag_mode=true&id_sort=true')).data
  t.same(ids(idSorted.items), ['tag:solo', 'tag:team', c.id, a.id], 'tag rows by their newest channel')
  t.match(idSorted.items[1], { status: 0, enabled_count: 1 }, 'mixed statuses show 0')
  t.same((await call('GET', '/api/channel/?p=9')).data.items, [], 'past the end: empty')
  t.same((await call('GET', '/api/channel/?tag_mode=true&p=9')).data, { items: [], page: 9, page_size: 20, total: 4 })
})

t.test('searches by id, name or key, and by group and model', async (t) => {
  const { call, create } = await setup(t)
  const alpha = await create({ name: 'Alpha main', key: 'sk-live-7f3a9c', groups: 'default,vip', models: 'gpt-4o,o3' })
  const beta = await create({ name: 'beta', key: 'sk-live-2b8e1d\nsk-spare-55aa', groups: 'vip', models: 'gpt-4o-mini', tag: 'pool' })
  const gamma = await create({ name: `gamma ${alpha.id}`, key: 'sk-test-000', groups: 'default', models: 'gpt-4o', tag: 'pool' })
  const search = async (query: string) => ((await call('GET', `/api/channel/search?${query}`)).data.items as Array<{ id: number }>).map((i) => i.id)
  t.same(await search(`keyword=${alpha.id}`), [gamma.id, alpha.id], 'a numeric keyword matches the id (and names containing it)')
  t.same(await search('keyword=ALPHA'), [alpha.id], 'names match case-insensitively')
  t.same(await search('keyword=sk-live-7f3a9c'), [alpha.id], 'a whole key matches')
  t.same(await search('keyword=7f3a'), [], 'part of a key does not: keys are write-only, a search must not read one out')
  t.same(await search('keyword=sk-spare-55aa'), [beta.id], 'any line of a multi-key channel matches')
  t.same(await search('keyword=sk-live'), [])
  t.same(await search('keyword=nothing-like-it'), [])
  t.same(await search('keyword=%25'), [], 'LIKE wildcards are literal')
  t.same(await search('group=vip'), [beta.id, alpha.id], 'group is one element of the list')
  t.same(await search('group=vi'), [], 'no partial group match')
  t.same(await search('model=gpt-4o'), [gamma.id, alpha.id], 'model is one element of the list (not gpt-4o-mini)')
  t.same(await search('model=gpt-4o&group=vip'), [alpha.id], 'filters combine')
  t.same(await search('keyword=sk-live-2b8e1d&model=gpt-4o-mini'), [beta.id])
  t.same(await search('keyword=sk-live-2b8e1d&model=gpt-4o'), [])
  const tagMode = (await call('GET', '/api/channel/search?group=default&tag_mode=true')).data
  t.equal(tagMode.total, 2)
  t.same(tagMode.items.map((i: { id?: number, tag?: string, children?: Array<{ id: number }> }) => i.id ?? i.children!.map((c) => c.id)), [[gamma.id], alpha.id],
    'a tag row holds only its channels that match')
})

t.test('tag edits overwrite what is given on every channel of the tag', async (t) => {
  const { app, call, create } = await setup(t)
  const one = await create({ tag: 'team', models: 'a', priority: 1 })
  const two = await create({ tag: 'team', models: 'b', priority: 2, model_mapping: '{"x":"y"}' })
  const outsider = await create({ tag: 'other', models: 'c' })
  t.same(await call('PUT', '/api/channel/tag', { tag: 'team' }), { success: false, message: 'Nothing was changed' })
  t.same(await call('PUT', '/api/channel/tag', { tag: 'team', new_tag: 'team', models: '', groups: [], model_mapping: ' ', priority: null }), { success: false, message: 'Nothing was changed' }, 'blank fields are no change')
  t.same(await call('PUT', '/api/channel/tag', { tag: 'team', model_mapping: '{oops' }), { success: false, message: 'The model redirect must be a valid JSON object' })
  t.same(await call('PUT', '/api/channel/tag', { tag: 'team', weight: -1 }), { success: false, message: 'The weight must be a non-negative integer' })
  t.same(await call('PUT', '/api/channel/tag', { tag: 'nobody', priority: 1 }), { success: false, message: 'No channel has the tag nobody' })

  const edit = await call('PUT', '/api/channel/tag', { tag: 'team', models: 'm1,m2', groups: 'vip', priority: 9, weight: 4 })
  t.same(edit, { success: true, message: '2 channels updated', data: 2 })
  const rows = await app.db.selectFrom('channels').select(['id', 'models', 'group', 'priority', 'weight', 'model_mapping', 'tag']).orderBy('id').execute()
  t.match(rows, [
    { id: one.id, models: 'm1,m2', group: 'vip', priority: 9, weight: 4, tag: 'team', model_mapping: '' },
    { id: two.id, models: 'm1,m2', group: 'vip', priority: 9, weight: 4, tag: 'team', model_mapping: /"x": "y"/ },
    { id: outsider.id, models: 'c', group: 'default', tag: 'other' }
  ], 'absent fields (the redirect) stay; other tags untouched')
  t.same((await abilities(app)).filter((a) => !a.startsWith(`${outsider.id}|`)),
    [`${one.id}|vip|m1|on|9|4|team`, `${one.id}|vip|m2|on|9|4|team`, `${two.id}|vip|m1|on|9|4|team`, `${two.id}|vip|m2|on|9|4|team`])

  t.equal((await call('POST', '/api/channel/tag/disabled', { tag: 'team' })).data, 2)
  t.same((await app.db.selectFrom('channels').select('status').where('tag', '=', 'team').execute()).map((r) => r.status), [2, 2])
  t.ok((await abilities(app)).filter((a) => a.includes('|team')).every((a) => a.includes('|off|')), 'the index follows a tag disable')
  await app.db.updateTable('channels').set({ status: 3 }).where('id', '=', one.id).execute()
  t.equal((await call('POST', '/api/channel/tag/enabled', { tag: 'team' })).data, 2)
  t.same((await app.db.selectFrom('channels').select('status').where('tag', '=', 'team').execute()).map((r) => r.status), [1, 1], 'enable all covers auto-disabled children')
  t.ok((await abilities(app)).filter((a) => a.includes('|team')).every((a) => a.includes('|on|')))
  t.same(await call('POST', '/api/channel/tag/enabled', { tag: 'ghost' }), { success: false, message: 'No channel has the tag ghost' })

  t.equal((await call('PUT', '/api/channel/tag', { tag: 'team', new_tag: 'crew', model_mapping: '{"m1":"m1-2025"}' })).data, 2)
  t.same((await app.db.selectFrom('channels').select(['tag', 'model_mapping']).where('id', 'in', [one.id, two.id]).execute()).map((r) => [r.tag, JSON.parse(r.model_mapping)]),
    [['crew', { m1: 'm1-2025' }], ['crew', { m1: 'm1-2025' }]], 'renamed, redirect overwritten')
  t.ok((await abilities(app)).filter((a) => a.startsWith(`${one.id}|`)).every((a) => a.endsWith('|crew')), 'abilities carry the new tag')
  t.equal((await call('PUT', '/api/channel/tag', { tag: 'crew', new_tag: '' })).data, 2, 'an empty new tag dissolves it')
  t.same((await app.db.selectFrom('channels').select('tag').where('id', 'in', [one.id, two.id]).execute()).map((r) => r.tag), [null, null])
  t.ok((await abilities(app)).filter((a) => a.startsWith(`${one.id}|`)).every((a) => a.endsWith('|')))
})

t.test('GET /api/channel/models lists every default and channel model once, sorted', async (t) => {
  const { call, create } = await setup(t)
  await create({ models: 'zeta-model,gpt-4o' })
  await create({ models: 'alpha-model, zeta-model' })
  const ids = ((await call('GET', '/api/channel/models')).data as Array<{ id: string }>).map((m) => m.id)
  const expected = [...new Set([...Object.values(defaultModelsByType()).flat(), 'zeta-model', 'gpt-4o', 'alpha-model'])].sort()
  t.same(ids, expected)
})

t.test('every channel route refuses normal users and anonymous callers', async (t) => {
  const { app } = await setup(t)
  const normal = await userSession(app, 'normal')
  const admin = await userSession(app, 'admin1', ROLES.admin)
  const routes = app.routeAccess.filter((r) => r.url.startsWith('/api/channel'))
  t.ok(routes.length >= 17)
  for (const route of routes) {
    // Reading a key back is the super admin's alone (keys are write-only to admins).
    t.equal(route.auth, route.url === '/api/channel/:id/key' ? 'root' : 'admin', `${route.method} ${route.url} is for admins`)
    const url = route.url.replace(/:(\w+)/g, '1')
    const res = await app.inject({ method: route.method as 'GET', url, headers: normal.headers, ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { payload: {} }) })
    t.equal(res.statusCode, 403, `${route.method} ${route.url} refuses a normal user`)
    t.equal((await app.inject({ method: route.method as 'GET', url })).statusCode, 401)
  }
  const listed = await app.inject({ url: '/api/channel/', headers: admin.headers })
  t.equal(listed.json().success, true, 'an admin (not only root) manages channels')
})

t.test('every change is announced to the gateways on the config channel', async (t) => {
  const { env, call, create } = await setup(t)
  const sub = new Redis(env.REDIS_URL!)
  t.teardown(() => { sub.disconnect() })
  const heard: ConfigChange[] = []
  sub.on('message', (_ch: string, text: string) => heard.push(JSON.parse(text) as ConfigChange))
  await sub.subscribe(configChannel(env.REDIS_KEY_PREFIX!))
  const next = async (): Promise<ConfigChange> => {
    for (let i = 0; i < 100 && heard.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    const change = heard.shift()
    if (change === undefined) throw new Error('no change announced')
    return change
  }
  const c = await create({ tag: 'x' })
  t.same(await next(), { kind: 'channel', id: c.id }, 'create')
  await call('POST', '/api/channel/', { name: 'b', type: 1, key: 'k1\nk2', models: 'm', mode: 'batch' })
  t.same(await next(), { kind: 'channel' }, 'batch create')
  await call('PUT', '/api/channel/', { id: c.id, name: 'renamed' })
  t.same(await next(), { kind: 'channel', id: c.id }, 'update')
  await call('PUT', '/api/channel/', { id: c.id, status: 2 })
  t.same(await next(), { kind: 'channel', id: c.id }, 'inline status')
  await call('PUT', '/api/channel/tag', { tag: 'x', priority: 3 })
  t.same(await next(), { kind: 'channel' }, 'tag edit')
  await call('POST', '/api/channel/tag/enabled', { tag: 'x' })
  t.same(await next(), { kind: 'channel' }, 'tag enable')
  await call('POST', '/api/channel/fix')
  t.same(await next(), { kind: 'channel' }, 'fix')
  await call('DELETE', `/api/channel/${c.id}/`)
  t.same(await next(), { kind: 'channel', id: c.id }, 'delete')
  t.same(heard, [], 'nothing else')
})
