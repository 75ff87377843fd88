import Type, { type Static } from 'typebox'
import { PasskeyAuthenticationResponse } from './passkey.js'

/** GET /api/user/2fa/status: the caller's second factor. */
export const TwoFactorStatus = Type.Object({
  enabled: Type.Boolean(),
  /** A setup was started (POST /2fa/setup) and not yet confirmed with a code. */
  pending: Type.Boolean(),
  /** Sign-in is locked for the account's name after too many wrong passwords or codes. */
  locked: Type.Boolean(),
  backup_codes_remaining: Type.Integer(),
  /** The caller is an admin without 2FA while TwoFactorRequiredForAdmins is on: every other console call is refused. */
  setup_required: Type.Boolean()
})
export type TwoFactorStatus = Static<typeof TwoFactorStatus>

/** POST /api/user/2fa/setup: shown once. */
export const TwoFactorSetup = Type.Object({
  /** Base32, for typing into an authenticator app. */
  secret: Type.String(),
  /** `otpauth://totp/<issuer>:<username>?secret=...&issuer=...`, for the QR code. */
  qr_code_data: Type.String(),
  backup_codes: Type.Array(Type.String())
})
export type TwoFactorSetup = Static<typeof TwoFactorSetup>

/** A TOTP code (six digits) or, where accepted, a backup code. */
export const TwoFactorCodeBody = Type.Object({ code: Type.String({ maxLength: 64 }) })
export type TwoFactorCodeBody = Static<typeof TwoFactorCodeBody>

/** The answer of a password or OAuth sign-in of an account with 2FA: no session yet. */
export const SecondStepRequired = Type.Object({ require_2fa: Type.Literal(true), flow_token: Type.String() })
export type SecondStepRequired = Static<typeof SecondStepRequired>

/** POST /api/user/login/2fa. */
export const TwoFactorLoginBody = Type.Object({ code: Type.String({ maxLength: 64 }), flow_token: Type.String({ maxLength: 128 }) })
export type TwoFactorLoginBody = Static<typeof TwoFactorLoginBody>

/** GET /api/user/2fa/stats (admins). */
export const TwoFactorStats = Type.Object({
  total_users: Type.Integer(),
  enabled_users: Type.Integer(),
  /** Percent of live users with 2FA enabled, one decimal. */
  enabled_rate: Type.Number()
})
export type TwoFactorStats = Static<typeof TwoFactorStats>

/**
 * Ways to prove the session's user for a sensitive operation. A method is one member of the
 * union, so a new one (a passkey assertion) is another member with fields of its own.
 */
export const VERIFY_METHODS = ['password', '2fa', 'passkey'] as const
export type VerifyMethod = typeof VERIFY_METHODS[number]

/**
 * POST /api/verify: `value` is the password or the TOTP/backup code; a passkey brings the
 * assertion made for the challenge of `POST /api/user/passkey/verify/begin`.
 */
export const VerifyBody = Type.Union([
  Type.Object({ method: Type.Literal('password'), value: Type.String({ maxLength: 128 }) }),
  Type.Object({ method: Type.Literal('2fa'), value: Type.String({ maxLength: 64 }) }),
  Type.Object({ method: Type.Literal('passkey'), response: PasskeyAuthenticationResponse })
])
export type VerifyBody = Static<typeof VerifyBody>

/** POST /api/verify and GET /api/verify/status. */
export const VerifyStatus = Type.Object({
  verified: Type.Boolean(),
  /** Unix seconds; 0 when not verified. */
  expires_at: Type.Integer(),
  /** The methods this user can verify with now. */
  methods: Type.Array(Type.String())
})
export type VerifyStatus = Static<typeof VerifyStatus>
