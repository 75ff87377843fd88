import Type, { type Static } from 'typebox'

/** `GET /readyz` answer of every service. */
export const ReadinessResponse = Type.Object({
  ready: Type.Boolean(),
  checks: Type.Record(Type.String(), Type.Object({ ok: Type.Boolean(), detail: Type.Optional(Type.String()) }))
})
export type ReadinessResponse = Static<typeof ReadinessResponse>
