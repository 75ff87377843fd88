import type { ChannelDetail } from '@modelgate/contracts'
import t from 'tap'
import { bodyOf, emptyForm, formOf, isMultiKey, KEY_HINT_TYPES, keyLines, mappingJson, otherKind, relatedModels, tagBodyOf, tagFormOf, validate, validateTag, validHeaderOverride } from './form.ts'
import catalogue from './i18n.ts'

const valid = () => ({ ...emptyForm(), name: 'main', key: 'sk-a', models: ['gpt-4o'] })

t.test('a new channel needs a name, groups, models and a key; an edit keeps a blank key', async (t) => {
  t.same(validate(valid(), true), {})
  const blank = { ...emptyForm(), groups: [] }
  t.same(validate(blank, true), {
    name: 'channel.form.error.name',
    groups: 'channel.form.error.groups',
    models: 'channel.form.error.models',
    key: 'channel.form.error.key'
  })
  t.same(validate({ ...valid(), key: '' }, false), {}, 'blank key on edit')
  t.equal(bodyOf({ ...valid(), key: '  ' }).key, undefined, 'a blank key is not sent')
})

t.test('JSON fields, URLs, priority and weight are checked as the server checks them', async (t) => {
  t.equal(validate({ ...valid(), statusCodeMapping: '{"400": "500"}' }, true).statusCodeMapping, undefined)
  t.equal(validate({ ...valid(), statusCodeMapping: '{"400": "oops"}' }, true).statusCodeMapping, 'channel.form.error.statusCodeMapping')
  t.equal(validate({ ...valid(), statusCodeMapping: '[1]' }, true).statusCodeMapping, 'channel.form.error.statusCodeMapping')
  t.equal(validate({ ...valid(), type: 8, setting: 'nope' }, true).setting, 'channel.form.error.setting')
  t.equal(validate({ ...valid(), type: 1, setting: 'nope' }, true).setting, undefined, 'only types 8 and 45 have settings')
  t.equal(validate({ ...valid(), baseUrl: 'ftp://x' }, true).baseUrl, 'channel.form.error.baseUrl')
  t.equal(validate({ ...valid(), proxyUrl: 'socks5://127.0.0.1:1080' }, true).proxyUrl, undefined)
  t.equal(validate({ ...valid(), proxyUrl: 'localhost' }, true).proxyUrl, 'channel.form.error.proxyUrl')
  t.equal(validate({ ...valid(), priority: '-1000' }, true).priority, 'channel.form.error.priority')
  t.equal(validate({ ...valid(), priority: '1.5' }, true).priority, 'channel.form.error.priority')
  t.equal(validate({ ...valid(), weight: 'x' }, true).weight, 'channel.form.error.weight')
  t.equal(bodyOf({ ...valid(), weight: '-3' }).weight, 0, 'a negative weight becomes 0')
  t.equal(validate({ ...valid(), type: 41, key: 'not json' }, true).key, 'channel.form.error.jsonKey')
  t.equal(validate({ ...valid(), type: 41, key: '{"type": "service_account"}' }, true).key, undefined)
})

t.test('the body: trailing slashes go, type defaults fill other, redirect rows need both sides', async (t) => {
  const body = bodyOf({
    ...valid(),
    type: 3,
    baseUrl: 'https://x.openai.azure.com//',
    mapping: [{ from: 'gpt-3.5-turbo', to: 'gpt-3.5-turbo-0125' }, { from: 'half', to: ' ' }],
    organization: 'org-1'
  })
  t.equal(body.base_url, 'https://x.openai.azure.com')
  t.equal(body.other, '2023-06-01-preview')
  t.equal(body.openai_organization, null, 'organization is for type 1 only')
  t.same(JSON.parse(body.model_mapping!), { 'gpt-3.5-turbo': 'gpt-3.5-turbo-0125' })
  t.equal(bodyOf({ ...valid(), type: 18 }).other, 'v2.1')
  t.equal(mappingJson([{ from: '', to: 'x' }]), '')
  t.same(bodyOf(valid()).group, 'default', 'default group')
  t.equal(bodyOf(valid()).auto_ban, 1, 'auto-disable on by default')
})

t.test('drawing and music types get their fixed action lists', async (t) => {
  t.ok(relatedModels(2, {}).includes('mj_imagine'))
  t.ok(relatedModels(5, {}).includes('mj_describe'))
  t.same(relatedModels(36, {}), ['suno_music', 'suno_lyrics'])
  t.same(relatedModels(1, { 1: ['gpt-4o'] }), ['gpt-4o'])
})

t.test('a JSON key is one credential, other keys one per line', async (t) => {
  t.same(keyLines('a\n\nb\na'), ['a', 'b'])
  t.same(keyLines('{"a": 1}'), ['{"a":1}'])
})

t.test('an edit loads the channel with models and groups split on commas and no key', async (t) => {
  const channel = {
    id: 1, type: 1, name: 'c', openai_organization: null, max_input_tokens: 0, base_url: '', other: '',
    models: 'a, b,a', group: 'default,vip', model_mapping: '{"x": "y"}', status_code_mapping: '', auto_ban: 0, test_model: '',
    priority: 3, weight: 2, tag: 't', proxy_url: '', setting: '', status: 1, response_time: 0, test_time: 0, balance: 0,
    balance_updated_time: 0, used_quota: 0, created_time: 0, other_info: {},
    param_override: '', header_override: '', multi_key_mode: 'random', key_states: {}, key_count: 1, key_hint: 'sk-…cret'
  } satisfies ChannelDetail
  const form = formOf(channel)
  t.same(form.models, ['a', 'b'])
  t.same(form.groups, ['default', 'vip'])
  t.same(form.mapping, [{ from: 'x', to: 'y' }])
  t.equal(form.key, '', 'the key field starts blank (the server sends no key, only its hint)')
  t.equal(form.storedKeyHint, 'sk-…cret')
  t.equal(form.autoBan, false)
})

t.test('a tag edit: blank keeps, a cleared name dissolves, nothing changed is refused', async (t) => {
  t.equal(tagBodyOf('team', tagFormOf('team')), undefined)
  t.same(tagBodyOf('team', { ...tagFormOf('team'), newTag: '' }), { tag: 'team', new_tag: '' })
  t.same(tagBodyOf('team', { ...tagFormOf('team'), priority: '5', models: ['a'] }), { tag: 'team', models: 'a', priority: 5 })
  t.same(validateTag({ ...tagFormOf('team'), weight: '-1', priority: 'x', modelMapping: '{' }), {
    modelMapping: 'channel.form.error.modelMapping',
    priority: 'channel.form.error.priority',
    weight: 'channel.tag.weightInvalid'
  })
})

const detail = (fields: Partial<ChannelDetail>): ChannelDetail => ({
  id: 7, type: 1, name: 'multi', openai_organization: null, max_input_tokens: 8192, base_url: 'https://up.example.com', other: '',
  models: 'gpt-4o', group: 'default', model_mapping: '', status_code_mapping: '', auto_ban: 1, test_model: '', priority: 0, weight: 0, tag: null,
  proxy_url: '', setting: '', status: 1, response_time: 0, test_time: 0, balance: 0, balance_updated_time: 0, used_quota: 0, created_time: 0,
  other_info: {}, param_override: '{\n  "temperature": 0.3\n}', header_override: '{\n  "X-Key": "{api_key}"\n}', multi_key_mode: 'polling',
  key_states: {}, key_count: 3, key_hint: '…-a', ...fields
})

t.test('an edit sending the key to another type, base URL or proxy needs the key typed again', async (t) => {
  const form = formOf(detail({}))
  t.same(validate({ ...form, baseUrl: 'https://up.example.com/' }, false), {}, 'the same address written differently')
  t.same(validate({ ...form, name: 'renamed' }, false), {}, 'other fields keep the key')
  for (const change of [{ baseUrl: 'https://elsewhere.example.com' }, { proxyUrl: 'http://127.0.0.1:3128' }, { type: 8 }]) {
    t.equal(validate({ ...form, ...change }, false).key, 'channel.form.error.keyForNewTarget', JSON.stringify(change))
    t.equal(validate({ ...form, ...change, key: 'sk-new' }, false).key, undefined, 'with a new key it is fine')
  }
  t.equal(validate({ ...valid(), baseUrl: 'https://x.example.com' }, true).key, undefined, 'a new channel has nothing stored')
})

t.test('overrides, multi-key mode and max input tokens go from the channel to the form and back unchanged', async (t) => {
  const form = formOf(detail({}))
  t.match(form, { paramOverride: '{\n  "temperature": 0.3\n}', headerOverride: '{\n  "X-Key": "{api_key}"\n}', multiKeyMode: 'polling', maxInputTokens: '8192', storedKeyCount: 3 })
  t.same(validate(form, false), {})
  const body = bodyOf(form)
  t.match(body, { param_override: '{\n  "temperature": 0.3\n}', header_override: '{\n  "X-Key": "{api_key}"\n}', multi_key_mode: 'polling', max_input_tokens: 8192 })
  t.notOk('key' in body, 'the stored keys stay')
  const plain = formOf(detail({ param_override: '', header_override: '', multi_key_mode: 'random', max_input_tokens: 0, key_count: 1 }))
  t.match(bodyOf(plain), { param_override: '', header_override: '', multi_key_mode: 'random', max_input_tokens: 0 }, 'none stays none')
  t.equal(formOf(detail({ multi_key_mode: 'odd' })).multiKeyMode, 'random', 'an unknown stored mode shows as random')
  t.match(bodyOf({ ...valid(), paramOverride: ' {"top_p": 1} ', maxInputTokens: ' ' }), { param_override: '{"top_p": 1}', max_input_tokens: 0 }, 'trimmed; a blank limit is none')
  t.match(bodyOf(emptyForm()), { param_override: '', header_override: '', multi_key_mode: 'random', max_input_tokens: 0 }, 'a new channel\'s defaults')
})

t.test('overrides and max input tokens are checked as the server checks them', async (t) => {
  t.equal(validate({ ...valid(), paramOverride: '{"temperature": ' }, true).paramOverride, 'channel.form.error.paramOverride')
  t.equal(validate({ ...valid(), paramOverride: '[1]' }, true).paramOverride, 'channel.form.error.paramOverride')
  t.equal(validate({ ...valid(), paramOverride: '{"temperature": 0.3}' }, true).paramOverride, undefined)
  t.ok(validHeaderOverride(''))
  t.ok(validHeaderOverride('{"Authorization": "Bearer {api_key}", "X-Team": "ops"}'))
  t.notOk(validHeaderOverride('{"X-A": 1}'), 'values are texts')
  t.notOk(validHeaderOverride('{"bad name": "x"}'), 'names are header tokens')
  t.notOk(validHeaderOverride('{"X-A": "a\\r\\nX-B: b"}'), 'one line')
  t.notOk(validHeaderOverride('["x"]'))
  t.equal(validate({ ...valid(), headerOverride: '{' }, true).headerOverride, 'channel.form.error.headerOverride')
  t.equal(validate({ ...valid(), maxInputTokens: '-1' }, true).maxInputTokens, 'channel.form.error.maxInputTokens')
  t.equal(validate({ ...valid(), maxInputTokens: '1.5' }, true).maxInputTokens, 'channel.form.error.maxInputTokens')
  t.equal(validate({ ...valid(), maxInputTokens: '128000' }, true).maxInputTokens, undefined)
})

t.test('the multi-key mode matters only for several keys in one channel', async (t) => {
  t.notOk(isMultiKey({ key: 'sk-a', batch: false, storedKeyCount: 0 }))
  t.ok(isMultiKey({ key: 'sk-a\nsk-b', batch: false, storedKeyCount: 0 }))
  t.notOk(isMultiKey({ key: 'sk-a\nsk-b', batch: true, storedKeyCount: 0 }), 'a batch makes one channel per key')
  t.notOk(isMultiKey({ key: 'sk-a\n\n sk-a ', batch: false, storedKeyCount: 0 }), 'blank and repeated lines do not count')
  t.ok(isMultiKey({ key: ' ', batch: false, storedKeyCount: 3 }), 'an edit keeping the stored keys')
  t.notOk(isMultiKey({ key: 'sk-new', batch: false, storedKeyCount: 3 }), 'a new single key replaces them')
  t.notOk(isMultiKey({ key: '{"type": "service_account",\n "k": "v"}', batch: false, storedKeyCount: 0 }), 'a JSON key is one key')
})

t.test('types whose key or extra field is their own get a field and a hint in both languages', async (t) => {
  t.equal(otherKind(33), 'awsRegion')
  t.equal(otherKind(23), 'tencentRegion')
  t.equal(otherKind(37), 'difyMode')
  t.equal(otherKind(21), 'knowledgeBase')
  t.equal(otherKind(39), 'accountId')
  t.equal(otherKind(1), undefined)
  const hints = [catalogue.en.form.keyHint, catalogue.zh.form.keyHint] as Array<Record<string, string>>
  for (const type of KEY_HINT_TYPES) for (const hint of hints) t.ok((hint[`t${type}`] ?? '').length > 10, `type ${type} has a key hint`)
  t.same(Object.keys(hints[0] ?? {}).sort(), KEY_HINT_TYPES.map((type) => `t${type}`).sort(), 'no hint for a type the drawer does not ask for')
})
