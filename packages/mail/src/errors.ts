/** SMTP is not set up: no server, or no sender address (SMTPFrom or SMTPAccount). */
export class MailNotConfiguredError extends Error {
  readonly code = 'MAIL_ERR_NOT_CONFIGURED'

  constructor () {
    super('SMTP is not configured: set SMTPServer and SMTPFrom or SMTPAccount')
    this.name = 'MailNotConfiguredError'
  }
}

/**
 * The SMTP server could not be reached, refused the login, or refused the message; `cause` says why.
 * The message is logged, so the SMTP password in it (a server may quote the AUTH line it refused,
 * plain or base64) is replaced by `[redacted]`.
 */
export class MailSendError extends Error {
  readonly code = 'MAIL_ERR_SEND'

  constructor (cause: unknown, login?: { user: string, pass: string }) {
    super(`sending mail failed: ${scrubLogin(cause instanceof Error ? cause.message : String(cause), login)}`, { cause })
    this.name = 'MailSendError'
  }
}

/** `text` without the password of `login`, as sent in the clear or in AUTH PLAIN/LOGIN's base64. */
function scrubLogin (text: string, login: { user: string, pass: string } | undefined): string {
  if (login === undefined || login.pass === '') return text
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')
  const forms = [b64(`\0${login.user}\0${login.pass}`), b64(login.pass), login.pass].filter((f) => f.length >= 4)
  let out = text
  for (const form of forms) out = out.split(form).join('[redacted]')
  return out
}
