import { ROLES, USER_CONCURRENCY_MAX, USER_STATUS } from '@modelgate/contracts'

export interface Actor { role: number }
export interface Target { role: number, status: number, deleted: boolean }

/** Which row actions a user-management row offers (docs/domain.md). */
export interface RowActions {
  promote: boolean
  demote: boolean
  /** Disable for an active user, enable otherwise; undefined when neither may be done. */
  toggle: 'disable' | 'enable' | undefined
  /** The enable button shows but is disabled for status 3. */
  toggleDisabled: boolean
  edit: boolean
  delete: boolean
}

const NONE: RowActions = { promote: false, demote: false, toggle: undefined, toggleDisabled: false, edit: false, delete: false }

/**
 * Nobody acts on users of the same or a higher role (so nobody acts on the super admin, nor on
 * themselves); only the super admin promotes and demotes; a deregistered user has no actions.
 */
export function rowActions (actor: Actor, target: Target): RowActions {
  if (target.deleted || actor.role <= target.role) return NONE
  const root = actor.role >= ROLES.root
  return {
    promote: root && target.role < ROLES.admin,
    demote: root && target.role >= ROLES.admin,
    toggle: target.status === USER_STATUS.enabled ? 'disable' : 'enable',
    toggleDisabled: target.status === 3,
    edit: true,
    delete: true
  }
}

/** The message key of a role number. */
export function roleKey (role: number): 'user.role.common' | 'user.role.admin' | 'user.role.root' | 'user.role.unknown' {
  if (role === ROLES.common) return 'user.role.common'
  if (role === ROLES.admin) return 'user.role.admin'
  if (role === ROLES.root) return 'user.role.root'
  return 'user.role.unknown'
}

export interface EditErrors { username?: string, password?: string, quota?: string, delta?: string, concurrency?: string }

/** Integers only: "12.5", "1e3" and "" are not quotas. */
export function parseInteger (text: string): number | undefined {
  const s = text.trim()
  if (!/^-?\d+$/.test(s)) return undefined
  const n = Number(s)
  return Number.isSafeInteger(n) ? n : undefined
}

/**
 * Edit form rules (docs/domain.md): username 1-12 characters, a new password 8-20, quota a
 * non-negative integer, the added quota any integer (empty is none) that keeps the balance >= 0,
 * the concurrency limit an integer from 0 (no limit) to 100000. Values are message keys.
 */
export function validateEdit (form: { username: string, password: string, quota: string, delta: string, concurrency: string }): EditErrors {
  const errors: EditErrors = {}
  const name = [...form.username.trim()].length
  if (name === 0 || name > 12) errors.username = 'user.form.usernameLength'
  const pass = [...form.password].length
  if (pass > 0 && (pass < 8 || pass > 20)) errors.password = 'user.form.passwordLength'
  const quota = parseInteger(form.quota)
  if (quota === undefined || quota < 0) errors.quota = 'user.form.quotaInvalid'
  const delta = form.delta.trim() === '' ? 0 : parseInteger(form.delta)
  if (delta === undefined) errors.delta = 'user.form.deltaInvalid'
  else if (quota !== undefined && quota >= 0 && quota + delta < 0) errors.delta = 'user.form.deltaNegative'
  const concurrency = parseInteger(form.concurrency)
  if (concurrency === undefined || concurrency < 0 || concurrency > USER_CONCURRENCY_MAX) errors.concurrency = 'user.form.concurrencyInvalid'
  return errors
}
