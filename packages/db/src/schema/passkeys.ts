import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely'

/**
 * A passkey (WebAuthn credential) of a user; public material only. Times are unix seconds.
 */
export interface PasskeysTable {
  id: Generated<number>
  user_id: number
  /** The credential id as the browser reports it (base64url); unique across all users. */
  credential_id: string
  /** The credential's public key, COSE-encoded (RFC 9052), as the authenticator gave it at registration. */
  public_key: Buffer
  /** The authenticator's signature counter at the last accepted assertion; 0 for authenticators that keep none. */
  counter: Generated<number>
  /** What the browser reported the authenticator reachable by ('internal', 'usb', 'hybrid', ...). */
  transports: ColumnType<string[], string[] | undefined, string[]>
  /** 'multiDevice' when the credential may be synced to other devices, else 'singleDevice'. */
  device_type: 'singleDevice' | 'multiDevice'
  /** Whether the authenticator reported the credential backed up (synced), as of its last use. */
  backed_up: Generated<boolean>
  /** The user handle the authenticator keeps for the account (base64url of random bytes, no personal data). */
  user_handle: string
  name: Generated<string>
  created_at: Generated<number>
  /** Null until first used to sign in or verify. */
  last_used_at: number | null
}
export type Passkey = Selectable<PasskeysTable>
export type NewPasskey = Insertable<PasskeysTable>
export type PasskeyUpdate = Updateable<PasskeysTable>
