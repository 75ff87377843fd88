import Type, { type Static } from 'typebox'
import { ApiEnvelope } from './api.js'

/** `GET /api/setup`: whether the first account exists (new-api's shape). */
export const SetupStatus = Type.Object({
  /** True once setup is done: some account exists. */
  status: Type.Boolean(),
  /** True when a live super admin exists. */
  root_init: Type.Boolean(),
  database_type: Type.Literal('postgres')
})
export type SetupStatus = Static<typeof SetupStatus>
export const SetupStatusResponse = ApiEnvelope(SetupStatus)

/**
 * `POST /api/setup`: creates the super admin on an empty database, once. new-api's site-mode
 * switches are accepted and ignored: this product has neither a self-use nor a demo-site mode.
 */
export const SetupBody = Type.Object({
  username: Type.String({ maxLength: 64 }),
  password: Type.String({ maxLength: 128 }),
  confirmPassword: Type.String({ maxLength: 128 }),
  SelfUseModeEnabled: Type.Optional(Type.Boolean()),
  DemoSiteEnabled: Type.Optional(Type.Boolean())
})
export type SetupBody = Static<typeof SetupBody>
