import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/**
 * Secrets at rest (token keys for reveal, channel keys): AES-256-GCM under a key derived from
 * CRYPTO_SECRET. Stored as `v1:<iv>:<tag>:<ciphertext>`, base64url parts.
 */
export class SecretBox {
  readonly #key: Buffer

  constructor (secret: string) {
    this.#key = createHash('sha256').update(`modelgate:v1:${secret}`).digest()
  }

  seal (plain: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv)
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(':')
  }

  /** Opens a sealed value; a value that was never sealed (imported data) is returned as is. */
  open (stored: string): string {
    if (!stored.startsWith('v1:')) return stored
    const [, iv, tag, ct] = stored.split(':')
    if (iv === undefined || tag === undefined || ct === undefined) throw new Error('malformed sealed secret')
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8')
  }
}

/** The part of a relay key after `sk-` (clients send it with or without the prefix). */
export function tokenKeyBody (key: string): string {
  return key.startsWith('sk-') ? key.slice(3) : key
}

/** Lookup hash of a relay key: SHA-256 hex of its body. */
export function tokenKeyHash (key: string): string {
  return createHash('sha256').update(tokenKeyBody(key)).digest('hex')
}
