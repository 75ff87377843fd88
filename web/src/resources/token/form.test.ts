import dayjs from 'dayjs'
import t from 'tap'
import { TokenCreateBody, type TokenView } from '@modelgate/contracts'
import { bodyOf, emptyForm, formOf, LIMIT_MAX, parseExpiry, presetExpiry, validate } from './form.ts'

t.test('reads the expiry as yyyy-MM-dd HH:mm:ss or never', async (t) => {
  t.equal(parseExpiry(''), -1)
  t.equal(parseExpiry(' -1 '), -1)
  t.equal(parseExpiry('2030-01-02 03:04:05'), dayjs('2030-01-02 03:04:05').unix())
  t.equal(parseExpiry('2030-02-30 10:00:00'), undefined, 'a day that does not exist')
  t.equal(parseExpiry('2030-1-2 3:4:5'), undefined, 'not the format')
  t.equal(parseExpiry('tomorrow'), undefined)
})

t.test('quick buttons set never or now plus a minute, hour, day or month', async (t) => {
  const now = dayjs('2030-01-31 12:00:00')
  t.equal(presetExpiry('never', now), '')
  t.equal(presetExpiry('minute', now), '2030-01-31 12:01:00')
  t.equal(presetExpiry('hour', now), '2030-01-31 13:00:00')
  t.equal(presetExpiry('day', now), '2030-02-01 12:00:00')
  t.equal(presetExpiry('month', now), '2030-02-28 12:00:00')
})

t.test('requires a name on create only, a future expiry, a whole quota and a batch of 1 to 100', async (t) => {
  const now = dayjs('2030-01-01 00:00:00').unix()
  t.same(validate({ ...emptyForm(), name: 'a' }, true, undefined, now), {})
  t.same(validate(emptyForm(), true, undefined, now), { name: 'token.form.nameRequired' })
  t.same(validate(emptyForm(), false, undefined, now), {}, 'an edit may leave the name empty')
  t.same(validate({ ...emptyForm(), name: 'a', expiry: '2029-12-31 23:59:59' }, true, undefined, now), { expiry: 'token.form.expiryPast' })
  t.same(validate({ ...emptyForm(), name: 'a', quota: '1.5' }, true, undefined, now), { quota: 'token.form.quotaInvalid' })
  t.same(validate({ ...emptyForm(), name: 'a', quota: 'x', unlimited: true }, true, undefined, now), {}, 'no quota needed when unlimited')
  t.same(validate({ ...emptyForm(), name: 'a', count: '101' }, true, undefined, now), { count: 'token.form.countInvalid' })
  t.same(validate({ ...emptyForm(), name: 'a', count: '0' }, true, undefined, now), { count: 'token.form.countInvalid' })
  t.same(validate({ ...emptyForm(), name: 'a', count: 'x' }, false, undefined, now), {}, 'no count when editing')
})

t.test('an unchanged past expiry may be saved with other edits', async (t) => {
  const now = dayjs('2030-01-01 00:00:00').unix()
  const past = dayjs('2029-06-01 00:00:00')
  const original = { expired_time: past.unix() } as Parameters<typeof validate>[2]
  t.same(validate({ ...emptyForm(), expiry: past.format('YYYY-MM-DD HH:mm:ss') }, false, original, now), {})
})

t.test('the body carries what the server takes', async (t) => {
  t.same(bodyOf({ ...emptyForm(), name: ' n ', quota: '5000000', models: ['a', 'b'], group: 'vip' }), {
    name: 'n',
    expired_time: -1,
    remain_quota: 5_000_000,
    unlimited_quota: false,
    allow_ips: '',
    model_limits_enabled: false,
    model_limits: 'a,b',
    group: 'vip',
    rpm_limit: 0,
    tpm_limit: 0,
    concurrency_limit: 0
  })
  t.notOk('remain_quota' in bodyOf({ ...emptyForm(), quota: '', unlimited: true }), 'an unlimited token keeps its stored quota')
})

t.test('per-token limits are whole numbers up to the server\'s bounds, blank meaning none', async (t) => {
  const now = dayjs('2030-01-01 00:00:00').unix()
  const form = { ...emptyForm(), name: 'a' }
  t.same(validate({ ...form, rpm: '1000000', tpm: '2000000000', concurrency: '100000' }, true, undefined, now), {}, 'the largest values')
  t.same(validate({ ...form, rpm: '', tpm: ' ', concurrency: '' }, true, undefined, now), {}, 'blank is no limit')
  t.same(validate({ ...form, rpm: '1000001', tpm: '2000000001', concurrency: '100001' }, true, undefined, now), {
    rpm: 'token.form.rpmInvalid', tpm: 'token.form.tpmInvalid', concurrency: 'token.form.concurrencyInvalid'
  })
  t.same(validate({ ...form, rpm: '-1', tpm: '1.5', concurrency: 'x' }, false, undefined, now), {
    rpm: 'token.form.rpmInvalid', tpm: 'token.form.tpmInvalid', concurrency: 'token.form.concurrencyInvalid'
  })
  t.match(bodyOf({ ...form, rpm: ' 60 ', tpm: '', concurrency: '3' }), { rpm_limit: 60, tpm_limit: 0, concurrency_limit: 3 })
})

t.test('an edit loads the limits and sends them back unchanged', async (t) => {
  const token = {
    id: 1, user_id: 1, name: 'n', key: 'sk-x', status: 1, created_time: 0, accessed_time: 0, expired_time: -1, remain_quota: 5,
    used_quota: 0, unlimited_quota: false, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '',
    rpm_limit: 60, tpm_limit: 90000, concurrency_limit: 4
  } satisfies TokenView
  const form = formOf(token)
  t.match(form, { rpm: '60', tpm: '90000', concurrency: '4' })
  t.match(bodyOf(form), { rpm_limit: 60, tpm_limit: 90000, concurrency_limit: 4 })
})

t.test('the limits\' bounds are the server\'s', async (t) => {
  const max = (field: 'rpm_limit' | 'tpm_limit' | 'concurrency_limit') => (TokenCreateBody.properties[field] as { maximum?: number }).maximum
  t.equal(LIMIT_MAX.rpm, max('rpm_limit'))
  t.equal(LIMIT_MAX.tpm, max('tpm_limit'))
  t.equal(LIMIT_MAX.concurrency, max('concurrency_limit'))
})
