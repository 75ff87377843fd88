/** SMTP is not set up: no server, or no sender address (SMTPFrom or SMTPAccount). */
export class MailNotConfiguredError extends Error {
  readonly code = 'MAIL_ERR_NOT_CONFIGURED'

  constructor () {
    super('SMTP is not configured: set SMTPServer and SMTPFrom or SMTPAccount')
    this.name = 'MailNotConfiguredError'
  }
}

/** The SMTP server could not be reached, refused the login, or refused the message; `cause` says why. */
export class MailSendError extends Error {
  readonly code = 'MAIL_ERR_SEND'

  constructor (cause: unknown) {
    super(`sending mail failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
    this.name = 'MailSendError'
  }
}
