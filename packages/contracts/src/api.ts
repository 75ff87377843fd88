import Type, { type Static, type TSchema } from 'typebox'

/** Every console API answer: `{success, message, data}`. */
export const ApiEnvelope = <T extends TSchema>(data: T) =>
  Type.Object({
    success: Type.Boolean(),
    message: Type.String(),
    data: Type.Optional(data)
  })

/** A failed console API answer. */
export const ApiFailure = Type.Object({
  success: Type.Literal(false),
  message: Type.String()
})
export type ApiFailure = Static<typeof ApiFailure>
