import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'

/**
 * A software WebAuthn authenticator for tests: what a browser and a platform authenticator
 * hand the server, built by hand after the WebAuthn Level 3 specification (authenticator data
 * section 6.1, attestation object 6.5, the "none" attestation 8.7, CollectedClientData 5.8.1,
 * assertion signatures 6.3.3) with an ES256 (P-256) key pair from node:crypto.
 */

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor> | { [key: string]: Cbor }

function cborHead (major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n])
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n])
  if (n < 0x10000) {
    const b = Buffer.alloc(3)
    b[0] = (major << 5) | 25
    b.writeUInt16BE(n, 1)
    return b
  }
  const b = Buffer.alloc(5)
  b[0] = (major << 5) | 26
  b.writeUInt32BE(n, 1)
  return b
}

/** CBOR (RFC 8949) of integers, text, byte strings and maps: all an attestation object and a COSE key hold. */
export function cbor (value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value)
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8')
    return Buffer.concat([cborHead(3, bytes.length), bytes])
  }
  if (value instanceof Uint8Array) return Buffer.concat([cborHead(2, value.length), value])
  const entries: Array<[Cbor, Cbor]> = value instanceof Map ? [...value] : Object.entries(value)
  return Buffer.concat([cborHead(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])])
}

const b64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url')
const sha256 = (data: Uint8Array | string): Buffer => createHash('sha256').update(data).digest()

// Authenticator data flags (WebAuthn 6.1).
const UP = 0x01
const UV = 0x04
const BE = 0x08
const BS = 0x10
const AT = 0x40

/** A credential the authenticator holds. */
export interface SoftCredential {
  id: Buffer
  rpId: string
  privateKey: KeyObject
  /** The COSE_Key (RFC 9052) of the public key, as registered. */
  publicKeyCose: Buffer
  /** The user handle the relying party gave at registration. */
  userHandle: Buffer
  counter: number
}

/** The parts of `PublicKeyCredentialCreationOptionsJSON` the authenticator reads. */
export interface CreationOptions { challenge: string, rp: { id?: string }, user: { id: string } }
/** The parts of `PublicKeyCredentialRequestOptionsJSON` the authenticator reads. */
export interface RequestOptions { challenge: string, rpId?: string, allowCredentials?: Array<{ id: string }> }

export interface Ceremony {
  /** The page's origin, as the browser writes it into the client data. */
  origin: string
  /** The RP ID whose hash goes into the authenticator data (default: the options'). */
  rpId?: string
  /** Sets UV (the user was verified with a PIN or biometrics); default true. */
  userVerified?: boolean
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = []
  /** Counts signatures (the counter starts at 0 and grows by one per assertion); false: always 0, like synced passkeys. */
  readonly counts: boolean
  /** Backup eligible and backed up (a synced, multi-device passkey). */
  readonly synced: boolean

  constructor (opts: { counts?: boolean, synced?: boolean } = {}) {
    this.counts = opts.counts ?? true
    this.synced = opts.synced ?? false
  }

  /** A copy holding the same keys and counters: what cloning an authenticator gives an attacker. */
  clone (): SoftAuthenticator {
    const copy = new SoftAuthenticator({ counts: this.counts, synced: this.synced })
    copy.credentials.push(...this.credentials.map((c) => ({ ...c })))
    return copy
  }

  #flags (ceremony: Ceremony, extra = 0): number {
    return UP | (ceremony.userVerified === false ? 0 : UV) | (this.synced ? BE | BS : 0) | extra
  }

  /** `navigator.credentials.create()` answered: a new P-256 credential with "none" attestation (RegistrationResponseJSON). */
  register (options: CreationOptions, ceremony: Ceremony) {
    const rpId = ceremony.rpId ?? options.rp.id ?? new URL(ceremony.origin).hostname
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const jwk = publicKey.export({ format: 'jwk' })
    // COSE_Key: kty EC2 (2), alg ES256 (-7), crv P-256 (1), x, y.
    const publicKeyCose = cbor(new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]))
    const id = randomBytes(32)
    const credential: SoftCredential = { id, rpId, privateKey, publicKeyCose, userHandle: Buffer.from(options.user.id, 'base64url'), counter: 0 }
    const idLength = Buffer.alloc(2)
    idLength.writeUInt16BE(id.length)
    const authData = Buffer.concat([sha256(rpId), Buffer.from([this.#flags(ceremony, AT)]), Buffer.alloc(4), Buffer.alloc(16), idLength, id, publicKeyCose])
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: ceremony.origin, crossOrigin: false }))
    this.credentials.push(credential)
    return {
      credential,
      response: {
        id: b64url(id),
        rawId: b64url(id),
        type: 'public-key' as const,
        response: {
          clientDataJSON: b64url(clientData),
          attestationObject: b64url(cbor({ fmt: 'none', attStmt: {}, authData })),
          transports: ['internal']
        },
        authenticatorAttachment: 'platform',
        clientExtensionResults: {}
      }
    }
  }

  /**
   * `navigator.credentials.get()` answered (AuthenticationResponseJSON): the credential the
   * options allow (or, discoverable, the first for the RP ID; or `credential`), the counter
   * moved on, ECDSA over authenticator data and the client data's hash.
   */
  assert (options: RequestOptions, ceremony: Ceremony & { credential?: SoftCredential }) {
    const rpId = ceremony.rpId ?? options.rpId ?? new URL(ceremony.origin).hostname
    const allowed = options.allowCredentials?.map((c) => c.id) ?? []
    const credential = ceremony.credential ??
      this.credentials.find((c) => allowed.length === 0 ? c.rpId === (options.rpId ?? rpId) : allowed.includes(b64url(c.id)))
    if (credential === undefined) throw new Error('the authenticator holds no credential for these options')
    if (this.counts) credential.counter += 1
    const counter = Buffer.alloc(4)
    counter.writeUInt32BE(credential.counter)
    const authData = Buffer.concat([sha256(rpId), Buffer.from([this.#flags(ceremony)]), counter])
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: ceremony.origin, crossOrigin: false }))
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), credential.privateKey)
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: b64url(credential.userHandle)
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {}
    }
  }
}
