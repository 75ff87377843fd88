/** The options that send the system's mail through the test SMTP server (@modelgate/mail/testing). */
export function smtpOptions (smtp: { host: string, port: number }): Record<string, string> {
  return {
    SMTPServer: smtp.host,
    SMTPPort: String(smtp.port),
    SMTPAccount: 'bot@modelgate.test',
    SMTPToken: 'smtp-secret',
    SMTPFrom: 'noreply@modelgate.test'
  }
}
