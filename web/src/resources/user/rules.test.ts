import t from 'tap'
import { ROLES } from '@modelgate/contracts'
import { parseInteger, rowActions, validateEdit } from './rules.ts'

const root = { role: ROLES.root }
const admin = { role: ROLES.admin }
const user = (role: number, status = 1, deleted = false) => ({ role, status, deleted })

t.test('only the super admin promotes and demotes', async (t) => {
  t.equal(rowActions(root, user(ROLES.common)).promote, true)
  t.equal(rowActions(root, user(ROLES.common)).demote, false)
  t.equal(rowActions(root, user(ROLES.admin)).demote, true)
  t.equal(rowActions(root, user(ROLES.admin)).promote, false)
  t.equal(rowActions(admin, user(ROLES.common)).promote, false, 'a regular admin cannot promote')
  t.equal(rowActions(admin, user(ROLES.common)).demote, false)
})

t.test('nobody acts on the same or a higher role, the super admin included', async (t) => {
  for (const [actor, target] of [[admin, user(ROLES.admin)], [admin, user(ROLES.root)], [root, user(ROLES.root)]] as const) {
    const a = rowActions(actor, target)
    t.same([a.promote, a.demote, a.toggle, a.edit, a.delete], [false, false, undefined, false, false])
  }
  t.equal(rowActions(admin, user(ROLES.common)).edit, true)
})

t.test('disable for active users, enable otherwise, the enable button disabled for status 3', async (t) => {
  t.equal(rowActions(root, user(ROLES.common, 1)).toggle, 'disable')
  t.equal(rowActions(root, user(ROLES.common, 2)).toggle, 'enable')
  t.equal(rowActions(root, user(ROLES.common, 2)).toggleDisabled, false)
  t.equal(rowActions(root, user(ROLES.common, 3)).toggle, 'enable')
  t.equal(rowActions(root, user(ROLES.common, 3)).toggleDisabled, true)
})

t.test('a deregistered user has no actions', async (t) => {
  const a = rowActions(root, user(ROLES.common, 1, true))
  t.same([a.promote, a.toggle, a.edit, a.delete], [false, undefined, false, false])
})

t.test('edit form: password 8-20 when set, quota a non-negative integer, added quota may be negative', async (t) => {
  const ok = { username: 'bob', password: '', quota: '100', delta: '', concurrency: '0' }
  t.same(validateEdit(ok), {})
  t.same(validateEdit({ ...ok, password: 'short' }), { password: 'user.form.passwordLength' })
  t.same(validateEdit({ ...ok, password: 'long-enough' }), {})
  t.same(validateEdit({ ...ok, quota: '-1' }), { quota: 'user.form.quotaInvalid' })
  t.same(validateEdit({ ...ok, quota: '1.5' }), { quota: 'user.form.quotaInvalid' })
  t.same(validateEdit({ ...ok, delta: '-100' }), {}, 'taking all of it is allowed')
  t.same(validateEdit({ ...ok, delta: '-101' }), { delta: 'user.form.deltaNegative' })
  t.same(validateEdit({ ...ok, delta: 'x' }), { delta: 'user.form.deltaInvalid' })
  t.same(validateEdit({ ...ok, username: '' }), { username: 'user.form.usernameLength' })
  t.same(validateEdit({ ...ok, username: 'thirteen-char' }), { username: 'user.form.usernameLength' })
})

t.test('edit form: the concurrency limit is a whole number from 0 (no limit) to 100000', async (t) => {
  const ok = { username: 'bob', password: '', quota: '100', delta: '', concurrency: '0' }
  for (const good of ['0', '1', ' 25 ', '100000']) t.same(validateEdit({ ...ok, concurrency: good }), {}, `${JSON.stringify(good)} is accepted`)
  for (const bad of ['', '-1', '100001', '2.5', 'ten']) {
    t.same(validateEdit({ ...ok, concurrency: bad }), { concurrency: 'user.form.concurrencyInvalid' }, `${JSON.stringify(bad)} is refused`)
  }
})

t.test('integers only', async (t) => {
  t.equal(parseInteger(' 42 '), 42)
  t.equal(parseInteger('-7'), -7)
  t.equal(parseInteger('1e3'), undefined)
  t.equal(parseInteger(''), undefined)
})
