import Type, { type Static } from 'typebox'

/**
 * Sign-in through OpenID Connect and generic OAuth 2.0 providers the super admin adds
 * (`/api/custom-oauth-provider`, field names as new-api's). The client secret is write-only: a
 * hint comes back, never the secret.
 */
export const CUSTOM_OAUTH_KINDS = ['oidc', 'oauth2'] as const
export type CustomOAuthKindName = typeof CUSTOM_OAUTH_KINDS[number]

export const TOKEN_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const
export type TokenAuthMethodName = typeof TOKEN_AUTH_METHODS[number]

/** Lowercase letters, digits, `-` and `_`, starting with a letter or digit: the callback is `/oauth/<slug>`. */
export const CUSTOM_OAUTH_SLUG_PATTERN = '^[a-z0-9][a-z0-9_-]{0,31}$'

const Url = Type.String({ maxLength: 2048 })
const Field = Type.String({ maxLength: 128 })

const editable = {
  name: Type.String({ minLength: 1, maxLength: 64 }),
  slug: Type.String({ pattern: CUSTOM_OAUTH_SLUG_PATTERN }),
  kind: Type.Union([Type.Literal('oidc'), Type.Literal('oauth2')]),
  enabled: Type.Boolean(),
  issuer: Url,
  authorization_endpoint: Url,
  token_endpoint: Url,
  user_info_endpoint: Url,
  jwks_url: Url,
  client_id: Type.String({ minLength: 1, maxLength: 512 }),
  /** Write-only: blank (or left out) keeps the stored secret on update. */
  client_secret: Type.String({ maxLength: 2048 }),
  token_endpoint_auth_method: Type.Union([Type.Literal('client_secret_basic'), Type.Literal('client_secret_post')]),
  /** Space-separated; blank: `openid profile email` for OIDC, none for OAuth 2.0. */
  scopes: Type.String({ maxLength: 1024 }),
  /** Claim or userinfo field (dotted path) of the account's stable id; blank: `sub` (OIDC) or `id` (OAuth 2.0). */
  user_id_field: Field,
  /** Blank: `preferred_username` (OIDC) or `login`/`username` (OAuth 2.0). */
  username_field: Field,
  /** Blank: `name`. */
  display_name_field: Field,
  /** Blank: `email`. */
  email_field: Field,
  /** New accounts may sign up through this provider (RegisterEnabled must allow registration too). */
  auto_register: Type.Boolean()
}

/** POST /api/custom-oauth-provider/. */
export const CustomOAuthProviderCreateBody = Type.Object({
  name: editable.name,
  slug: editable.slug,
  client_id: editable.client_id,
  kind: Type.Optional(editable.kind),
  enabled: Type.Optional(editable.enabled),
  issuer: Type.Optional(editable.issuer),
  authorization_endpoint: Type.Optional(editable.authorization_endpoint),
  token_endpoint: Type.Optional(editable.token_endpoint),
  user_info_endpoint: Type.Optional(editable.user_info_endpoint),
  jwks_url: Type.Optional(editable.jwks_url),
  client_secret: Type.Optional(editable.client_secret),
  token_endpoint_auth_method: Type.Optional(editable.token_endpoint_auth_method),
  scopes: Type.Optional(editable.scopes),
  user_id_field: Type.Optional(editable.user_id_field),
  username_field: Type.Optional(editable.username_field),
  display_name_field: Type.Optional(editable.display_name_field),
  email_field: Type.Optional(editable.email_field),
  auto_register: Type.Optional(editable.auto_register)
})
export type CustomOAuthProviderCreateBody = Static<typeof CustomOAuthProviderCreateBody>

/** PUT /api/custom-oauth-provider/:id: the fields to change; a blank client_secret keeps the stored one. */
export const CustomOAuthProviderUpdateBody = Type.Partial(Type.Object(editable))
export type CustomOAuthProviderUpdateBody = Static<typeof CustomOAuthProviderUpdateBody>

/** A provider as the super admin reads it (never the secret). */
export const CustomOAuthProviderView = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  kind: editable.kind,
  enabled: Type.Boolean(),
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  user_info_endpoint: Type.String(),
  jwks_url: Type.String(),
  client_id: Type.String(),
  /** A few characters of the stored secret (`abc…wxyz`); empty when none is stored. */
  client_secret_hint: Type.String(),
  client_secret_set: Type.Boolean(),
  token_endpoint_auth_method: editable.token_endpoint_auth_method,
  scopes: Type.String(),
  user_id_field: Type.String(),
  username_field: Type.String(),
  display_name_field: Type.String(),
  email_field: Type.String(),
  auto_register: Type.Boolean(),
  created_at: Type.Integer(),
  updated_at: Type.Integer()
})
export type CustomOAuthProviderView = Static<typeof CustomOAuthProviderView>

/** POST /api/custom-oauth-provider/discovery: an issuer (its `/.well-known/openid-configuration` is read) or the document's own address. */
export const CustomOAuthDiscoveryBody = Type.Object({
  issuer: Type.Optional(Url),
  /** new-api's name for `issuer`. */
  issuer_url: Type.Optional(Url),
  well_known_url: Type.Optional(Url)
})
export type CustomOAuthDiscoveryBody = Static<typeof CustomOAuthDiscoveryBody>

/** What discovery found, as provider fields to prefill; `discovery` is the document itself. */
export const CustomOAuthDiscoveryResult = Type.Object({
  well_known_url: Type.String(),
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  user_info_endpoint: Type.String(),
  jwks_url: Type.String(),
  scopes: Type.String(),
  token_endpoint_auth_method: editable.token_endpoint_auth_method,
  discovery: Type.Record(Type.String(), Type.Unknown())
})
export type CustomOAuthDiscoveryResult = Static<typeof CustomOAuthDiscoveryResult>

/** An enabled provider as the sign-in page shows it (in /api/status). */
export const PublicCustomOAuthProvider = Type.Object({
  id: Type.Integer(),
  slug: Type.String(),
  name: Type.String()
})
export type PublicCustomOAuthProvider = Static<typeof PublicCustomOAuthProvider>

/** GET /api/user/oauth/bindings: the caller's accounts at custom providers. */
export const CustomOAuthBindingView = Type.Object({
  provider_id: Type.Integer(),
  provider_name: Type.String(),
  provider_slug: Type.String(),
  /** The provider can still be used to sign in. */
  provider_enabled: Type.Boolean(),
  /** The account's subject at the provider. */
  provider_user_id: Type.String(),
  created_at: Type.Integer()
})
export type CustomOAuthBindingView = Static<typeof CustomOAuthBindingView>

/** GET /api/oauth/:slug/authorize: where to send the browser (PKCE, state and nonce already in it). */
export const CustomOAuthAuthorizeAnswer = Type.Object({ url: Type.String() })
export type CustomOAuthAuthorizeAnswer = Static<typeof CustomOAuthAuthorizeAnswer>
