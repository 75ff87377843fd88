import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

/** How a provider is spoken to: OpenID Connect (an ID token) or plain OAuth 2.0 (a userinfo endpoint). */
export type CustomOAuthKind = 'oidc' | 'oauth2'

/** How the client authenticates at the token endpoint (RFC 6749 section 2.3.1). */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post'

/**
 * A sign-in provider the super admin added (OpenID Connect or generic OAuth 2.0). Endpoints are
 * empty when unused; times are unix seconds.
 */
export interface CustomOAuthProvidersTable {
  id: Generated<number>
  /** Lowercase letters, digits and dashes; the callback is `/oauth/<slug>`. */
  slug: string
  /** Shown on the sign-in button. */
  name: string
  kind: CustomOAuthKind
  enabled: Generated<boolean>
  /** OIDC: the `iss` the ID token must carry (and the discovery base). */
  issuer: Generated<string>
  authorization_endpoint: Generated<string>
  token_endpoint: Generated<string>
  userinfo_endpoint: Generated<string>
  /** OIDC: where the keys that sign ID tokens are published. */
  jwks_uri: Generated<string>
  client_id: string
  /** Sealed with the app's SecretBox (AES-256-GCM under CRYPTO_SECRET); empty when none. */
  client_secret_encrypted: Generated<string>
  /** A few characters of the secret, for the console (never the secret). */
  client_secret_hint: Generated<string>
  token_endpoint_auth_method: Generated<TokenEndpointAuthMethod>
  /** Space-separated; empty: `openid profile email` (OIDC) or none (OAuth 2.0). */
  scopes: Generated<string>
  /** Claim (OIDC) or userinfo field (OAuth 2.0, dotted paths allowed) of the account's stable id; empty: `sub` or `id`. */
  user_id_field: Generated<string>
  username_field: Generated<string>
  display_name_field: Generated<string>
  email_field: Generated<string>
  /** New accounts may be created through this provider (when RegisterEnabled too). */
  auto_register: Generated<boolean>
  created_at: Generated<number>
  updated_at: Generated<number>
}
export type CustomOAuthProvider = Selectable<CustomOAuthProvidersTable>
export type NewCustomOAuthProvider = Insertable<CustomOAuthProvidersTable>
export type CustomOAuthProviderUpdate = Updateable<CustomOAuthProvidersTable>

/** A provider account (its subject) bound to a user; unique per provider and subject, and per user and provider. */
export interface CustomOAuthLinksTable {
  id: Generated<number>
  user_id: number
  provider_id: number
  subject: string
  created_at: Generated<number>
}
export type CustomOAuthLink = Selectable<CustomOAuthLinksTable>
