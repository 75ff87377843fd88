import { OptionValues } from '@modelgate/contracts'
import t from 'tap'
import { MailNotConfiguredError, MailSendError, sendMail, smtpSettingsFrom, type SmtpSettings } from '../src/index.js'
import { startTestSmtpServer } from '../src/testing.js'

const options = (values: Record<string, string>) => new OptionValues(new Map(Object.entries(values)))

t.test('settings come from the SMTP options, with port 587 by default and From falling back to the account', async (t) => {
  t.same(smtpSettingsFrom(options({ SMTPServer: ' smtp.example.com ', SMTPAccount: 'bot@example.com', SMTPToken: 'secret' })), {
    host: 'smtp.example.com',
    port: 587,
    secure: false,
    user: 'bot@example.com',
    pass: 'secret',
    from: 'bot@example.com'
  })
  const custom = smtpSettingsFrom(options({ SMTPServer: 'mx', SMTPPort: '2525', SMTPAccount: 'a', SMTPFrom: 'noreply@example.com', SMTPSSLEnabled: 'true' }))
  t.match(custom, { port: 2525, secure: true, from: 'noreply@example.com' })
  t.equal(smtpSettingsFrom(options({ SMTPPort: 'abc' })).port, 587, 'a port that is not a number falls back to 587')
})

t.test('port 465 forces SSL even when SMTPSSLEnabled is off', async (t) => {
  const settings = smtpSettingsFrom(options({ SMTPServer: 'mx', SMTPPort: '465', SMTPAccount: 'a', SMTPSSLEnabled: 'false' }))
  t.equal(settings.secure, true)
})

t.test('sends a message that a real SMTP server receives with its headers and bodies', async (t) => {
  const smtp = await startTestSmtpServer()
  t.teardown(() => smtp.close())
  const settings: SmtpSettings = { host: smtp.host, port: smtp.port, secure: false, user: 'bot@example.com', pass: 'token-1', from: 'noreply@example.com' }
  const { messageId } = await sendMail(settings, {
    to: 'alice@example.org',
    subject: 'ModelGate 邮箱验证 code',
    text: 'Your code is 123456 — 验证码',
    html: '<p>Your code is <b>123456</b> — 验证码</p>',
    fromName: 'ModelGate'
  })
  t.equal(smtp.messages.length, 1)
  const mail = smtp.lastTo('alice@example.org')!
  t.same(mail.envelope, { from: 'noreply@example.com', to: ['alice@example.org'] })
  t.same(mail.auth, { username: 'bot@example.com', password: 'token-1' }, 'logged in with the account and token')
  t.equal(mail.subject, 'ModelGate 邮箱验证 code')
  t.match(mail.headers['from'], /ModelGate.*<noreply@example\.com>/)
  t.equal(mail.headers['to'], 'alice@example.org')
  t.equal(mail.headers['message-id'], messageId)
  t.match(mail.headers['content-type'], /^multipart\/alternative/)
  t.equal(mail.text, 'Your code is 123456 — 验证码')
  t.equal(mail.html, '<p>Your code is <b>123456</b> — 验证码</p>')
  t.match(mail.raw, /\r\n\r\n/, 'the raw message is kept')
})

t.test('a From with a display name is used as it is, and no login happens without an account', async (t) => {
  const smtp = await startTestSmtpServer()
  t.teardown(() => smtp.close())
  await sendMail({ host: smtp.host, port: smtp.port, secure: false, user: '', pass: '', from: 'Support <help@example.com>' }, {
    to: 'bob@example.org', subject: 'Hi', text: 'plain', html: '<i>html</i>', fromName: 'ignored'
  })
  const mail = smtp.lastTo('bob@example.org')!
  t.equal(mail.headers['from'], 'Support <help@example.com>')
  t.equal(mail.auth, undefined)
})

t.test('secure settings speak TLS from the first byte, so a plain-text server fails', async (t) => {
  const smtp = await startTestSmtpServer()
  t.teardown(() => smtp.close())
  const settings = smtpSettingsFrom(options({ SMTPServer: smtp.host, SMTPPort: '465', SMTPAccount: 'a@example.com' }))
  const err = await sendMail({ ...settings, port: smtp.port }, { to: 'c@example.org', subject: 's', text: 't', html: 'h' }).catch((e: unknown) => e)
  t.type(err, MailSendError)
  t.equal((err as MailSendError).code, 'MAIL_ERR_SEND')
  t.equal(smtp.messages.length, 0)

  const plain = await sendMail({ ...settings, port: smtp.port, secure: false }, { to: 'c@example.org', subject: 's', text: 't', html: 'h' })
  t.ok(plain.messageId, 'the same server accepts the message without SSL')
})

t.test('refuses clearly when SMTP is not configured', async (t) => {
  const mail = { to: 'x@example.org', subject: 's', text: 't', html: 'h' }
  const err = await sendMail(smtpSettingsFrom(options({})), mail).catch((e: unknown) => e)
  t.type(err, MailNotConfiguredError)
  t.equal((err as MailNotConfiguredError).code, 'MAIL_ERR_NOT_CONFIGURED')
  await t.rejects(sendMail(smtpSettingsFrom(options({ SMTPServer: 'mx' })), mail), MailNotConfiguredError, 'a server without a sender address is not enough')
})

t.test('an unreachable server fails with a send error', async (t) => {
  const smtp = await startTestSmtpServer()
  const port = smtp.port
  await smtp.close()
  await t.rejects(sendMail({ host: '127.0.0.1', port, secure: false, user: '', pass: '', from: 'a@example.com' }, {
    to: 'x@example.org', subject: 's', text: 't', html: 'h'
  }), MailSendError)
})
