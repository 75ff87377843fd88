import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

/** One message as the test server received it, with its headers and bodies decoded. */
export interface ReceivedMail {
  /** MAIL FROM and RCPT TO addresses. */
  envelope: { from: string, to: string[] }
  /** The login the client authenticated with, if it did. */
  auth?: { username: string, password: string }
  /** The message exactly as sent (headers and MIME body). */
  raw: string
  /** Top-level headers by lower-case name, unfolded, encoded words decoded; the first of repeated names. */
  headers: Record<string, string>
  /** Decoded Subject header. */
  subject: string
  /** The text/plain part, decoded ('' when absent). */
  text: string
  /** The text/html part, decoded ('' when absent). */
  html: string
}

/** A real SMTP server on 127.0.0.1 for tests. */
export interface TestSmtpServer {
  host: string
  port: number
  /** Every message received so far, oldest first. */
  messages: ReceivedMail[]
  /** The newest message whose envelope names `address` as a recipient. */
  lastTo: (address: string) => ReceivedMail | undefined
  /** Stops listening and drops open connections. */
  close: () => Promise<void>
}

function decodeQuotedPrintable (text: string, underscoreIsSpace = false): Buffer {
  const clean = text.replace(/=\r?\n/g, '')
  const bytes: number[] = []
  for (let i = 0; i < clean.length; i++) {
    const c = clean[i]!
    const hex = clean.slice(i + 1, i + 3)
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16))
      i += 2
    } else if (c === '_' && underscoreIsSpace) {
      bytes.push(0x20)
    } else {
      bytes.push(...Buffer.from(c, 'utf8'))
    }
  }
  return Buffer.from(bytes)
}

/** Decodes RFC 2047 encoded words (`=?UTF-8?B?...?=`, `=?UTF-8?Q?...?=`); UTF-8 only, enough for nodemailer. */
function decodeWords (value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_whole, _charset: string, enc: string, data: string) =>
      (enc.toUpperCase() === 'B' ? Buffer.from(data, 'base64') : decodeQuotedPrintable(data, true)).toString('utf8'))
}

function splitHead (raw: string): { headers: Record<string, string>, body: string } {
  const match = /\r?\n\r?\n/.exec(raw)
  const head = match === null ? raw : raw.slice(0, match.index)
  const body = match === null ? '' : raw.slice(match.index + match[0].length)
  const headers: Record<string, string> = {}
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    headers[name] ??= decodeWords(line.slice(colon + 1).trim())
  }
  return { headers, body }
}

function decodeBody (body: string, encoding: string | undefined): string {
  switch (encoding?.toLowerCase()) {
    case 'base64': return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
    case 'quoted-printable': return decodeQuotedPrintable(body).toString('utf8')
    default: return body
  }
}

/** Finds the text/plain and text/html parts, descending into multipart bodies. */
function collectParts (headers: Record<string, string>, body: string, out: { text: string, html: string }): void {
  const type = headers['content-type'] ?? 'text/plain'
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1]
  if (/^multipart\//i.test(type) && boundary !== undefined) {
    const parts = body.split(`--${boundary}`).slice(1)
    for (const part of parts) {
      if (part.startsWith('--')) break
      const inner = splitHead(part.replace(/^\r?\n/, ''))
      collectParts(inner.headers, inner.body, out)
    }
    return
  }
  const decoded = decodeBody(body, headers['content-transfer-encoding']).replace(/\r?\n$/, '')
  if (/^text\/html/i.test(type)) out.html ||= decoded
  else if (/^text\/plain/i.test(type)) out.text ||= decoded
}

/** Parses a message as nodemailer writes it: enough MIME to read the headers and both bodies. */
export function parseMail (raw: string): Pick<ReceivedMail, 'headers' | 'subject' | 'text' | 'html'> {
  const { headers, body } = splitHead(raw)
  const parts = { text: '', html: '' }
  collectParts(headers, body, parts)
  return { headers, subject: headers['subject'] ?? '', ...parts }
}

/**
 * Starts an SMTP server on 127.0.0.1 on a free port: no TLS (STARTTLS is not offered), login
 * optional and any login accepted. Needs `smtp-server` installed (a devDependency of the caller).
 */
export async function startTestSmtpServer (): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = []
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    allowInsecureAuth: true,
    closeTimeout: 1000,
    onAuth (auth, _session, callback) {
      callback(null, { user: { username: auth.username ?? '', password: auth.password ?? '' } })
    },
    onData (stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('error', callback)
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const { mailFrom, rcptTo } = session.envelope
        messages.push({
          envelope: { from: mailFrom === false ? '' : mailFrom.address, to: rcptTo.map((r) => r.address) },
          auth: session.user as ReceivedMail['auth'],
          raw,
          ...parseMail(raw)
        })
        callback()
      })
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.server.address() as AddressInfo
  return {
    host: '127.0.0.1',
    port,
    messages,
    lastTo: (address) => messages.findLast((m) => m.envelope.to.some((to) => to.toLowerCase() === address.toLowerCase())),
    close: async () => { await new Promise<void>((resolve) => server.close(() => resolve())) }
  }
}
