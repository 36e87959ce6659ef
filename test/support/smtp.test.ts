import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import nodemailer from 'nodemailer'
import { startSmtpCapture, type SmtpCapture } from './smtp.ts'

describe('startSmtpCapture', () => {
  let capture: SmtpCapture

  beforeEach(async () => {
    capture = await startSmtpCapture()
  })

  afterEach(async () => {
    await capture.stop()
  })

  test('listens on loopback and exposes a nodemailer-ready URL', () => {
    expect(capture.url).toBe(`smtp://127.0.0.1:${capture.port}`)
    expect(capture.port).toBeGreaterThan(0)
  })

  test('captures envelope, subject and the decoded text body exactly', async () => {
    // Long enough to force quoted-printable soft line breaks, and '=' to force =3D.
    const token = `tok_${'A1b2C3d4E5f6G7h8I9j0'.repeat(3)}=${'K1l2M3n4O5p6Q7r8S9t0'.repeat(3)}` // 125 chars
    const verifyUrl = `https://alttext.example/verify?token=${token}&email=a%40b.example`
    const text = ['Hello there,', '', `Your token: ${token}`, `Confirm here: ${verifyUrl}`, 'Ünïcödé line so the body is not pure ASCII — “quotes”.'].join('\n')

    const transport = nodemailer.createTransport(capture.url)
    const info = await transport.sendMail({
      from: 'alttext@localhost',
      to: ['first@example.test', 'second@example.test'],
      subject: 'Confirm your address — ✓',
      text,
    })
    expect(info.accepted).toEqual(['first@example.test', 'second@example.test'])

    const mail = await capture.waitForMail((m) => m.to.includes('first@example.test'))
    expect(mail.from).toBe('alttext@localhost')
    expect(mail.to).toEqual(['first@example.test', 'second@example.test'])
    expect(mail.subject).toBe('Confirm your address — ✓')
    expect(mail.text).toContain(token)
    expect(mail.text).toContain(verifyUrl)
    expect(mail.text.trimEnd()).toBe(text)
    expect(mail.text).not.toContain('=3D')
    // The raw message really was transfer-encoded, so the decoding above was exercised.
    expect(mail.headers['content-transfer-encoding']).toBe('quoted-printable')
    expect(mail.raw).toContain('=3D')
    expect(capture.messages).toHaveLength(1)
  })

  test('decodes text/plain out of a multipart/alternative message', async () => {
    const transport = nodemailer.createTransport(capture.url)
    await transport.sendMail({
      from: 'alttext@localhost',
      to: 'reader@example.test',
      subject: 'Both kinds',
      text: 'plain body with ?token=abc123=',
      html: '<p>html body</p>',
    })
    const mail = await capture.waitForMail()
    expect(mail.text.trimEnd()).toBe('plain body with ?token=abc123=')
    expect(mail.html?.trimEnd()).toBe('<p>html body</p>')
  })

  test('waitForMail resolves when a later message arrives, without polling', async () => {
    const waiting = capture.waitForMail((m) => m.subject === 'second')
    const transport = nodemailer.createTransport(capture.url)
    await transport.sendMail({ from: 'a@localhost', to: 'b@example.test', subject: 'first', text: '1' })
    await transport.sendMail({ from: 'a@localhost', to: 'b@example.test', subject: 'second', text: '2' })
    const mail = await waiting
    expect(mail.text.trimEnd()).toBe('2')
    expect(capture.messages.map((m) => m.subject)).toEqual(['first', 'second'])
  })

  test('waitForMail rejects after its timeout when nothing matches', async () => {
    await expect(capture.waitForMail((m) => m.subject === 'never', 50)).rejects.toThrow(/no matching mail within 50 ms/)
  })

  test('failNext makes sendMail reject with the SMTP code, then delivery recovers', async () => {
    const transport = nodemailer.createTransport(capture.url)
    capture.failNext(1)
    const failure = await transport.sendMail({ from: 'a@localhost', to: 'b@example.test', subject: 'doomed', text: 'x' }).then(
      () => null,
      (error: unknown) => error as { responseCode?: number },
    )
    expect(failure).not.toBeNull()
    expect(failure?.responseCode).toBe(451)
    expect(capture.messages).toHaveLength(0)
    expect(capture.rejected.map((m) => m.subject)).toEqual(['doomed'])

    capture.failNext(1, 550)
    await expect(transport.sendMail({ from: 'a@localhost', to: 'b@example.test', subject: 'permanent', text: 'y' })).rejects.toMatchObject({
      responseCode: 550,
    })

    await transport.sendMail({ from: 'a@localhost', to: 'b@example.test', subject: 'ok', text: 'z' })
    expect((await capture.waitForMail()).subject).toBe('ok')
  })

  test('accepts AUTH over plain loopback SMTP', async () => {
    const { port } = capture
    const transport = nodemailer.createTransport(`smtp://mailer:secret@127.0.0.1:${port}`)
    await transport.sendMail({ from: 'a@localhost', to: 'b@example.test', subject: 'authed', text: 'x' })
    expect((await capture.waitForMail()).authUser).toBe('mailer')
  })

  test('stop() closes promptly while a pooled client keeps its connection open', async () => {
    const pooled = nodemailer.createTransport({ host: '127.0.0.1', port: capture.port, pool: true })
    await pooled.sendMail({ from: 'a@localhost', to: 'b@example.test', subject: 'pooled', text: 'x' })
    // Settle into a value right away so the rejection during stop() counts as handled.
    const pendingWait = capture
      .waitForMail((m) => m.subject === 'never')
      .then(
        () => new Error('unexpectedly resolved'),
        (error: unknown) => error,
      )
    const started = performance.now()
    await capture.stop()
    expect(performance.now() - started).toBeLessThan(900) // below the 1 s closeTimeout backstop
    expect(String(await pendingWait)).toMatch(/stopped while waiting/)
    pooled.close()
  })
})
