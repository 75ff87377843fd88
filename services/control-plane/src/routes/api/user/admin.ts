import {
  addUserQuota,
  findTwoFactorEnabledIds,
  findUserById,
  isTwoFactorEnabled,
  insertLog,
  listUsers,
  softDeleteUser,
  updateUser,
  type User,
  type UserUpdate
} from '@modelgate/db'
import { LOG_TYPE, USER_CONCURRENCY_MAX, USER_STATUS, ROLES } from '@modelgate/contracts'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import Type from 'typebox'
import { fail, forbidden, ok } from '../../../lib/errors.js'
import { M } from '../../../lib/messages.js'
import { pageOf, type PageParams, PageQuery } from '../../../lib/paging.js'
import {
  checkPassword,
  checkUsername,
  createAccount,
  hashPassword,
  isUniqueViolation,
  outranks,
  publicUser
} from '../../../services/users.js'
import { recordAudit } from '../../../services/audit.js'
import { userAudit } from '../../../services/audit-targets.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, loadOptions: app.loadOptions }
  /** The target user, when the caller outranks it (or it is the caller, for reading). */
  async function target (req: FastifyRequest, id: number, opts: { allowSelf: boolean }): Promise<User> {
    const actor = req.auth!.user
    const user = await findUserById(app.db, id)
    if (user === undefined) throw fail(M.userNotFound)
    if (!(opts.allowSelf && user.id === actor.id) && !outranks(actor, user)) throw forbidden(M.cannotManageSameOrHigher)
    return user
  }

  const list = async (req: FastifyRequest, q: PageParams & { keyword?: string, group?: string }) => {
    const { page, pageSize, offset } = pageOf(q)
    const actor = req.auth!.user
    const { items, total } = await listUsers(app.db, { belowRole: actor.role, selfId: actor.id, keyword: q.keyword, group: q.group, offset, limit: pageSize })
    const withTwoFactor = await findTwoFactorEnabledIds(app.db, items.map((u) => u.id))
    return ok({ items: items.map((u) => ({ ...u, two_fa_enabled: withTwoFactor.has(u.id) })), page, page_size: pageSize, total })
  }

  app.get('/', { config: { auth: 'admin' }, schema: { querystring: Type.Object(PageQuery) } }, async (req) => await list(req, req.query))

  app.get('/search', {
    config: { auth: 'admin' },
    schema: { querystring: Type.Object({ ...PageQuery, keyword: Type.Optional(Type.String({ maxLength: 100 })), group: Type.Optional(Type.String({ maxLength: 64 })) }) }
  }, async (req) => await list(req, req.query))

  app.get('/:id', {
    config: { auth: 'admin' },
    schema: { params: Type.Object({ id: Type.Integer({ minimum: 1 }) }) }
  }, async (req) => {
    const user = await target(req, req.params.id, { allowSelf: true })
    return ok({ ...publicUser(user), two_fa_enabled: await isTwoFactorEnabled(app.db, user.id) })
  })

  app.post('/', {
    config: { auth: 'admin' },
    schema: {
      body: Type.Object({
        username: Type.String({ maxLength: 64 }),
        password: Type.String({ maxLength: 64 }),
        display_name: Type.Optional(Type.String({ maxLength: 64 })),
        // A normal user or an admin; the super admin is made only at first start.
        role: Type.Optional(Type.Union([Type.Literal(ROLES.common), Type.Literal(ROLES.admin)]))
      })
    }
  }, async (req) => {
    const { username, password, display_name: displayName, role = ROLES.common } = req.body
    if (username.trim() === '' || password === '') throw fail(M.usernamePasswordEmpty)
    if (role >= req.auth!.user.role) throw fail(M.cannotCreateSameOrHigher)
    const user = await createAccount(deps, { username: username.trim(), password, displayName: displayName?.trim() || undefined, role })
    await recordAudit(deps, req, { action: 'user.create', targetType: 'user', targetId: user.id, after: userAudit(user) })
    return ok(publicUser(user), req.t(M.userCreated))
  })

  app.put('/', {
    config: { auth: 'admin' },
    schema: {
      body: Type.Object({
        id: Type.Integer({ minimum: 1 }),
        username: Type.Optional(Type.String({ maxLength: 64 })),
        display_name: Type.Optional(Type.String({ maxLength: 64 })),
        password: Type.Optional(Type.String({ maxLength: 64 })),
        email: Type.Optional(Type.String({ maxLength: 254 })),
        group: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        quota: Type.Optional(Type.Integer()),
        /** Added to the balance atomically; may be negative while the result stays >= 0. */
        quota_delta: Type.Optional(Type.Integer()),
        /** Requests in flight at once across all gateways; 0 for no limit. */
        concurrency_limit: Type.Optional(Type.Integer({ minimum: 0, maximum: USER_CONCURRENCY_MAX }))
      }, { additionalProperties: true })
    }
  }, async (req) => {
    const body = req.body
    const actor = req.auth!.user
    const before = await target(req, body.id, { allowSelf: false })
    const patch: UserUpdate = {}
    if (body.username !== undefined && body.username !== before.username) {
      checkUsername(body.username)
      patch.username = body.username
    }
    if (body.display_name !== undefined) patch.display_name = body.display_name
    if (body.email !== undefined) patch.email = body.email
    if (body.group !== undefined) patch.group = body.group
    if (body.concurrency_limit !== undefined) patch.concurrency_limit = body.concurrency_limit
    if (body.password !== undefined && body.password !== '') {
      checkPassword(body.password)
      patch.password_hash = await hashPassword(body.password)
      patch.password_is_default = false
      patch.session_version = before.session_version + 1
    }
    if (body.quota !== undefined && body.quota < 0) throw fail(M.quotaNegative)
    // An absolute quota is applied as a difference from the value read, in one statement.
    const delta = (body.quota !== undefined ? body.quota - before.quota : 0) + (body.quota_delta ?? 0)
    let after: User
    try {
      after = await app.db.transaction().execute(async (trx) => {
        let user = Object.keys(patch).length > 0 ? await updateUser(trx, before.id, patch) : before
        if (user === undefined) throw fail(M.userNotFound)
        if (delta !== 0) {
          user = await addUserQuota(trx, before.id, delta)
          if (user === undefined) throw fail(M.quotaNegative)
          await insertLog(trx, {
            type: LOG_TYPE.manage,
            user_id: before.id,
            username: user.username,
            quota: delta,
            content: `admin ${actor.username} (id ${actor.id}) changed the quota from ${user.quota - delta} to ${user.quota}`
          })
        }
        await recordAudit(deps, req, { action: 'user.update', targetType: 'user', targetId: before.id, before: userAudit(before), after: userAudit(user) }, trx)
        return user
      })
    } catch (err) {
      if (isUniqueViolation(err, 'users_username_live')) throw fail(M.usernameTaken)
      throw err
    }
    // The gateways spend from the cached balance: move it by the same amount as Postgres.
    await app.quota.adjust('user', before.id, delta)
    await app.publishChange({ kind: 'user', id: before.id })
    return ok(publicUser(after), req.t(M.userUpdated))
  })

  app.post('/manage', {
    config: { auth: 'admin' },
    schema: {
      body: Type.Object({
        id: Type.Integer({ minimum: 1 }),
        action: Type.Union(['promote', 'demote', 'disable', 'enable', 'delete'].map((a) => Type.Literal(a)))
      })
    }
  }, async (req) => {
    const actor = req.auth!.user
    const { id, action } = req.body
    const user = await findUserById(app.db, id)
    if (user === undefined) throw fail(M.userNotFound)
    if (user.role >= ROLES.root && action !== 'enable') throw fail(M.cannotTouchRoot)
    if (!outranks(actor, user)) throw forbidden(M.cannotManageSameOrHigher)
    let updated: User | undefined
    switch (action) {
      case 'promote':
        if (actor.role < ROLES.root) throw forbidden(M.onlyRootPromotes)
        if (user.role >= ROLES.admin) throw fail(M.alreadyAdmin)
        updated = await updateUser(app.db, id, { role: ROLES.admin })
        break
      case 'demote':
        if (actor.role < ROLES.root) throw forbidden(M.onlyRootPromotes)
        if (user.role === ROLES.common) throw fail(M.alreadyCommon)
        updated = await updateUser(app.db, id, { role: ROLES.common })
        break
      case 'disable':
        updated = await updateUser(app.db, id, { status: USER_STATUS.disabled, session_version: user.session_version + 1 })
        break
      case 'enable':
        updated = await updateUser(app.db, id, { status: USER_STATUS.enabled })
        break
      case 'delete':
        updated = await softDeleteUser(app.db, id)
        break
    }
    if (updated === undefined) throw fail(M.userNotFound)
    await recordAudit(deps, req, { action: `user.${action}`, targetType: 'user', targetId: id, before: userAudit(user), after: userAudit(updated) })
    await app.publishChange({ kind: 'user', id })
    return ok({ status: updated.status, role: updated.role, deleted: updated.deleted_at !== null })
  })
}
export default routes
