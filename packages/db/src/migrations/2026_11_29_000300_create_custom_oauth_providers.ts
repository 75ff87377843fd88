// Frozen migration: imports nothing from the project.
//
// Sign-in through OpenID Connect and generic OAuth 2.0 providers the super admin adds.
// custom_oauth_providers: one row per provider, found by its slug (the callback path
// /oauth/<slug>); the client secret is sealed with the app's SecretBox (AES-256-GCM under
// CRYPTO_SECRET, like channel keys) and only a short hint of it is kept readable. The *_field
// columns name the claims (OIDC) or userinfo fields (OAuth 2.0) read for the account's id,
// username, e-mail and display name; empty means the standard claim.
// custom_oauth_links: which provider account (subject) belongs to which user; a subject signs in
// one user at most, and a user holds one account per provider. A provider with links cannot be
// deleted (disable it instead), so no account loses its way in silently.
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('custom_oauth_providers')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('oidc', 'oauth2')`))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('issuer', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('authorization_endpoint', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('token_endpoint', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('userinfo_endpoint', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('jwks_uri', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_secret_encrypted', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('client_secret_hint', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('token_endpoint_auth_method', 'text', (c) => c.notNull().defaultTo('client_secret_basic')
      .check(sql`token_endpoint_auth_method in ('client_secret_basic', 'client_secret_post')`))
    .addColumn('scopes', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('user_id_field', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('username_field', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('display_name_field', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('email_field', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('auto_register', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .addColumn('updated_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .execute()

  await db.schema.createTable('custom_oauth_links')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider_id', 'integer', (c) => c.notNull().references('custom_oauth_providers.id').onDelete('restrict'))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull().defaultTo(sql`extract(epoch from now())::bigint`))
    .addUniqueConstraint('custom_oauth_links_provider_subject', ['provider_id', 'subject'])
    .addUniqueConstraint('custom_oauth_links_user_provider', ['user_id', 'provider_id'])
    .execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('custom_oauth_links').execute()
  await db.schema.dropTable('custom_oauth_providers').execute()
}
