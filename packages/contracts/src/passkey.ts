import Type, { type Static } from 'typebox'

/** Longest passkey name a user may give. */
export const PASSKEY_NAME_MAX = 64

/** Most passkeys one account may hold. */
export const PASSKEYS_PER_USER_MAX = 10

/** One of the caller's passkeys, as `GET /api/user/passkey` lists it (never its key). Times are unix seconds. */
export const PasskeyView = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  created_at: Type.Integer(),
  /** The last sign-in or verification with it; null when never used. */
  last_used_at: Type.Union([Type.Integer(), Type.Null()]),
  /** The authenticator reported the credential backed up (synced to the user's other devices). */
  backed_up: Type.Boolean(),
  /** 'multiDevice' when the credential may be synced, 'singleDevice' when it stays on one authenticator. */
  device_type: Type.String(),
  /** How the browser reaches the authenticator: 'internal', 'usb', 'hybrid', 'nfc', 'ble'. */
  transports: Type.Array(Type.String())
})
export type PasskeyView = Static<typeof PasskeyView>

/** `GET /api/user/passkey` (and an admin's `GET /api/user/{id}/passkey`). */
export const PasskeyList = Type.Object({
  /** The account has at least one passkey (new-api's field). */
  enabled: Type.Boolean(),
  /** The latest use of any of them; null when none was used (new-api's field). */
  last_used_at: Type.Union([Type.Integer(), Type.Null()]),
  /** Passkeys are switched on for the site (PasskeyEnabled): they can be added and used. */
  available: Type.Boolean(),
  items: Type.Array(PasskeyView)
})
export type PasskeyList = Static<typeof PasskeyList>

const b64url = Type.String({ maxLength: 16_384 })
const extensions = Type.Record(Type.String(), Type.Unknown())

/**
 * What `navigator.credentials.create()` produced, in its JSON form (WebAuthn Level 3
 * `RegistrationResponseJSON`, what `@simplewebauthn/browser`'s `startRegistration` returns).
 */
export const PasskeyRegistrationResponse = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 2048 }),
  rawId: Type.String({ minLength: 1, maxLength: 2048 }),
  type: Type.Literal('public-key'),
  response: Type.Object({
    clientDataJSON: b64url,
    attestationObject: b64url,
    authenticatorData: Type.Optional(b64url),
    transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 })),
    publicKeyAlgorithm: Type.Optional(Type.Integer()),
    publicKey: Type.Optional(b64url)
  }),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  clientExtensionResults: Type.Optional(extensions)
})
export type PasskeyRegistrationResponse = Static<typeof PasskeyRegistrationResponse>

/** What `navigator.credentials.get()` produced, in its JSON form (`AuthenticationResponseJSON`). */
export const PasskeyAuthenticationResponse = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 2048 }),
  rawId: Type.String({ minLength: 1, maxLength: 2048 }),
  type: Type.Literal('public-key'),
  response: Type.Object({
    clientDataJSON: b64url,
    authenticatorData: b64url,
    signature: b64url,
    userHandle: Type.Optional(Type.String({ maxLength: 1024 }))
  }),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  clientExtensionResults: Type.Optional(extensions)
})
export type PasskeyAuthenticationResponse = Static<typeof PasskeyAuthenticationResponse>

/** `POST /api/user/passkey/register/finish`; a blank name is replaced by the device's. */
export const PasskeyRegisterBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: PASSKEY_NAME_MAX })),
  response: PasskeyRegistrationResponse
})
export type PasskeyRegisterBody = Static<typeof PasskeyRegisterBody>

/** `POST /api/user/passkey/login/finish`. */
export const PasskeyLoginBody = Type.Object({
  flow_id: Type.String({ maxLength: 128 }),
  response: PasskeyAuthenticationResponse
})
export type PasskeyLoginBody = Static<typeof PasskeyLoginBody>

/** `POST /api/user/passkey/verify/finish`. */
export const PasskeyVerifyBody = Type.Object({ response: PasskeyAuthenticationResponse })
export type PasskeyVerifyBody = Static<typeof PasskeyVerifyBody>

/** `PUT /api/user/passkey/{id}`. */
export const PasskeyRenameBody = Type.Object({ name: Type.String({ maxLength: PASSKEY_NAME_MAX }) })
export type PasskeyRenameBody = Static<typeof PasskeyRenameBody>
