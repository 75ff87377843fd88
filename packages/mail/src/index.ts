import type { OptionValues } from '@modelgate/contracts'
import { createTransport } from 'nodemailer'
import { MailNotConfiguredError, MailSendError } from './errors.js'

export { MailNotConfiguredError, MailSendError } from './errors.js'

/** Where and how mail is sent, read from the SMTP options by {@link smtpSettingsFrom}. */
export interface SmtpSettings {
  /** SMTP server host name or address; empty when SMTP is not configured. */
  host: string
  /** TCP port; default 587. */
  port: number
  /**
   * TLS from the first byte (SMTPS). Always true on port 465; otherwise the connection starts in
   * plain text and upgrades with STARTTLS when the server offers it.
   */
  secure: boolean
  /** Login name; with an empty `user` or `pass` the server is used without authentication. */
  user: string
  /** Password or API token for `user`. */
  pass: string
  /** Sender address (may be `Name <address>`); SMTPFrom, else SMTPAccount. */
  from: string
  /**
   * Turns `host` into the address to connect to (the outbound guard's allowed address, so no
   * second resolution can rebind it); absent: the mail client resolves the name itself.
   */
  resolve?: (host: string) => Promise<string>
}

/** One message. Both bodies are sent, as multipart/alternative. */
export interface MailMessage {
  /** Recipient address. */
  to: string
  subject: string
  html: string
  text: string
  /** Display name for the sender when `from` is a bare address (the site's name). */
  fromName?: string
}

/** Default submission port (docs/domain.md). */
export const DEFAULT_SMTP_PORT = 587
/** The implicit-TLS port: SSL is forced on it whatever SMTPSSLEnabled says. */
export const SMTPS_PORT = 465
/** Milliseconds allowed to connect, and then to receive the server's greeting. */
export const CONNECT_TIMEOUT_MS = 10_000
/** Milliseconds of silence allowed on an open connection. */
export const SOCKET_TIMEOUT_MS = 30_000

/** SMTP settings from the options SMTPServer, SMTPPort, SMTPAccount, SMTPFrom, SMTPToken and SMTPSSLEnabled. */
export function smtpSettingsFrom (options: OptionValues): SmtpSettings {
  const portText = options.str('SMTPPort').trim()
  const parsed = Number(portText)
  const port = portText !== '' && Number.isInteger(parsed) && parsed >= 1 && parsed <= 65535 ? parsed : DEFAULT_SMTP_PORT
  const user = options.str('SMTPAccount').trim()
  const from = options.str('SMTPFrom').trim()
  return {
    host: options.str('SMTPServer').trim(),
    port,
    secure: port === SMTPS_PORT || options.bool('SMTPSSLEnabled'),
    user,
    pass: options.str('SMTPToken'),
    from: from !== '' ? from : user
  }
}

/** True when a server and a sender address are set. */
export function isSmtpConfigured (settings: SmtpSettings): boolean {
  return settings.host !== '' && settings.from !== ''
}

/**
 * Sends one message over a fresh SMTP connection, closed afterwards (mail here is rare: codes and
 * reset links). Resolves with the server-assigned message id once the server accepted the message.
 * Throws {@link MailNotConfiguredError} when SMTP is not set up, {@link MailSendError} otherwise.
 */
export async function sendMail (settings: SmtpSettings, mail: MailMessage): Promise<{ messageId: string }> {
  if (!isSmtpConfigured(settings)) throw new MailNotConfiguredError()
  let address = settings.host
  try {
    if (settings.resolve !== undefined) address = await settings.resolve(settings.host)
  } catch (err) {
    throw new MailSendError(err)
  }
  const transport = createTransport({
    host: address,
    // TLS still verifies the certificate against the configured name.
    ...(address === settings.host ? {} : { servername: settings.host }),
    port: settings.port,
    secure: settings.secure,
    auth: settings.user === '' || settings.pass === '' ? undefined : { user: settings.user, pass: settings.pass },
    connectionTimeout: CONNECT_TIMEOUT_MS,
    greetingTimeout: CONNECT_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS
  })
  const bare = !settings.from.includes('<')
  try {
    const info = await transport.sendMail({
      from: bare && mail.fromName !== undefined && mail.fromName !== '' ? { name: mail.fromName, address: settings.from } : settings.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html
    })
    return { messageId: info.messageId }
  } catch (err) {
    throw new MailSendError(err, { user: settings.user, pass: settings.pass })
  } finally {
    transport.close()
  }
}
