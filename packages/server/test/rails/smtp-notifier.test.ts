// Mail by SMTP (TESSERA_SMTP_URL): a real SMTP server in-process (smtp-server, implicit TLS, AUTH), the
// platform configured by environment only, mail sent through the outbox table after the business step's
// commit, retried on the sandbox clock, never sent twice.
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, Harness } from '../harness/harness.ts';
import { aMerchant, payments } from '../harness/payments-builders.ts';

interface Received {
  from: string;
  to: string[];
  raw: string;
  secure: boolean;
  user: unknown;
}

const USER = 'tessera';
const PASSWORD = 'correct horse battery';
const FROM = '"Acme Cards" <no-reply@acme.example>';
const STRONG = 'Str0ng!pass';

/** An SMTP server with implicit TLS (its own self-signed certificate) that requires a login. */
class MailServer {
  readonly received: Received[] = [];
  private server: SMTPServer | undefined;
  port = 0;

  async start(port = 0): Promise<void> {
    const options: SMTPServerOptions = {
      secure: true,
      authMethods: ['PLAIN', 'LOGIN'],
      logger: false,
      onAuth: (auth, _session, callback) => {
        if (auth.username === USER && auth.password === PASSWORD) callback(null, { user: USER });
        else callback(new Error('Invalid username or password'));
      },
      onRcptTo: (address, _session, callback) => {
        if (address.address.endsWith('@nowhere.example')) {
          callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 }));
        } else callback();
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          this.received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
            secure: session.secure,
            user: session.user,
          });
          callback();
        });
      },
    };
    const server = new SMTPServer(options);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  to(recipient: string): Received[] {
    return this.received.filter((r) => r.to.includes(recipient));
  }
}

/** The quoted-printable body decoded enough to read words and links (soft breaks and =XX). */
function decodeQp(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

const smtpUrl = (port: number, password = PASSWORD) =>
  `smtps://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}?tls.rejectUnauthorized=false`;

async function aPartner(h: Harness): Promise<{ partnerId: string }> {
  return (await h.admin<{ partnerId: string }>('POST', '/partners', { json: { name: 'Acme Cards' } })).body;
}

async function register(h: Harness, partnerId: string, email: string): Promise<void> {
  const res = await h.request('POST', '/issuing/v1/auth/register/email', {
    headers: { 'x-partner-id': partnerId },
    json: { email, password: STRONG },
  });
  expect(res.status).toBe(202);
}

async function mailRows(h: Harness, recipient: string) {
  return h.tessera.services.db
    .selectFrom('outbound_mail')
    .selectAll()
    .where('recipient', '=', recipient)
    .execute();
}

describe('mail by SMTP', () => {
  const mail = new MailServer();
  let h: Harness;
  let partnerId: string;

  beforeAll(async () => {
    await mail.start();
    h = await Harness.start({ env: { TESSERA_SMTP_URL: smtpUrl(mail.port), TESSERA_MAIL_FROM: FROM } });
    partnerId = (await aPartner(h)).partnerId;
  });
  afterAll(async () => {
    await h.close();
    await mail.stop();
  });

  it('sends a verification code over TLS with a login, as text and HTML, once', async () => {
    await register(h, partnerId, 'ada@example.com');
    const [message] = await eventually(async () => {
      const got = mail.to('ada@example.com');
      return got.length ? got : undefined;
    });
    expect(message?.secure).toBe(true);
    expect(message?.user).toBe(USER);
    expect(message?.from).toBe('no-reply@acme.example');
    const raw = decodeQp(message?.raw ?? '');
    expect(raw).toMatch(/^From: Acme Cards <no-reply@acme\.example>/m);
    expect(raw).toMatch(/^Subject: Your Acme Cards verification code/m);
    expect(raw).toMatch(/^Message-ID: <msg_[0-9A-Z]+@acme\.example>/m);
    expect(raw).toContain('Content-Type: text/plain');
    expect(raw).toContain('Content-Type: text/html');
    const code = /Your verification code is (\d{6})\./.exec(raw)?.[1];
    expect(code).toBeDefined();
    expect(raw).toContain(`<p>Your verification code is ${code}.`);

    // The code in the mail is the one that verifies the registration.
    const verified = await h.request('POST', '/issuing/v1/auth/register/email/verify', {
      headers: { 'x-partner-id': partnerId },
      json: { email: 'ada@example.com', code },
    });
    expect(verified.status).toBe(200);

    const [row] = await mailRows(h, 'ada@example.com');
    expect(row).toMatchObject({ status: 'sent', attempt_count: 1, last_error: null });
    expect(row?.smtp_response).toMatch(/^250/);
    // Stored encrypted, not as the words sent.
    expect(row?.body_enc).not.toContain(code);

    // A day of sweeps later it has still been sent once.
    await h.advanceClock(24 * 3600);
    expect(mail.to('ada@example.com')).toHaveLength(1);
    // The sandbox inbox keeps a copy for the developer.
    const inbox = await h.request<{ data: { subject: string }[] }>(
      'GET',
      '/sandbox/messages?recipient=ada@example.com',
      { headers: { authorization: `Bearer ${h.adminToken}` } },
    );
    expect(inbox.body.data).toHaveLength(1);
  });

  it('a payment link emailed to a buyer arrives with its page as a link in the HTML', async () => {
    const merchant = await aMerchant(h);
    const created = await payments(h, merchant, 'POST', '/payment-link', {
      amount: '19.99',
      currency: 'EUR',
      description: 'Concert <ticket> & drink',
    });
    const url: string = created.body.data.url;
    const sent = await payments(h, merchant, 'POST', `/payment-link/${created.body.data.hash}/email`, {
      email: 'buyer@example.com',
    });
    expect(sent.status).toBe(200);
    const [message] = await eventually(async () => {
      const got = mail.to('buyer@example.com');
      return got.length ? got : undefined;
    });
    const raw = decodeQp(message?.raw ?? '');
    expect(raw).toMatch(/^Subject: Site 1 asks you to pay 19\.99 EUR/m);
    expect(raw).toContain('for Concert <ticket> & drink.');
    expect(raw).toContain('for Concert &lt;ticket&gt; &amp; drink.');
    expect(raw).toContain(`<a href="${url}">${url}</a>`);
    await h.advanceClock(3600);
    expect(mail.to('buyer@example.com')).toHaveLength(1);
  });

  it('deletes what was sent or given up once 30 days have passed, never what is still to send', async () => {
    const port = mail.port;
    await mail.stop();
    await register(h, partnerId, 'pending@example.com');
    await eventually(async () =>
      (await mailRows(h, 'pending@example.com'))[0]?.last_error ? true : undefined,
    );
    await mail.start(port);
    // The pending one is sent at its retry; 31 days on, the sent ones are gone.
    await h.advanceClock(31 * 86_400);
    expect(mail.to('pending@example.com')).toHaveLength(1);
    await h.advanceClock(31 * 86_400);
    expect(await mailRows(h, 'ada@example.com')).toEqual([]);
    expect(await mailRows(h, 'pending@example.com')).toEqual([]);
  });

  it('gives up at once on a recipient the server refuses for good', async () => {
    await register(h, partnerId, 'ghost@nowhere.example');
    const [row] = await eventually(async () => {
      const rows = await mailRows(h, 'ghost@nowhere.example');
      return rows[0]?.status === 'failed' ? rows : undefined;
    });
    expect(row).toMatchObject({ attempt_count: 1, sent_at: null });
    expect(row?.last_error).toMatch(/^EENVELOPE: .*550/);
    await h.advanceClock(24 * 3600);
    expect((await mailRows(h, 'ghost@nowhere.example'))[0]?.attempt_count).toBe(1);
  });

  it('keeps the mail while the server is down and sends it once it is back, when its retry is due', async () => {
    const port = mail.port;
    await mail.stop();
    await register(h, partnerId, 'grace@example.com');
    const [row] = await eventually(async () => {
      const rows = await mailRows(h, 'grace@example.com');
      return rows[0]?.last_error ? rows : undefined;
    });
    expect(row).toMatchObject({ status: 'pending', attempt_count: 1 });
    expect(row?.last_error).toMatch(/^(ECONNECTION|ESOCKET)/);

    await mail.start(port);
    // Not before its retry is due (30 s on the sandbox clock)...
    await h.advanceClock(10);
    expect(mail.to('grace@example.com')).toHaveLength(0);
    // ...then once.
    await h.advanceClock(25);
    expect(mail.to('grace@example.com')).toHaveLength(1);
    expect((await mailRows(h, 'grace@example.com'))[0]).toMatchObject({ status: 'sent', attempt_count: 2 });
    await h.advanceClock(3600);
    expect(mail.to('grace@example.com')).toHaveLength(1);
  });
});

describe('mail by SMTP with a wrong password', () => {
  const mail = new MailServer();
  let h: Harness;

  beforeAll(async () => {
    await mail.start();
    h = await Harness.start({
      captureLogs: true,
      env: { TESSERA_SMTP_URL: smtpUrl(mail.port, 'wrong'), TESSERA_MAIL_FROM: FROM },
    });
  });
  afterAll(async () => {
    await h.close();
    await mail.stop();
  });

  it('says so at start and on the message, and keeps the message for a retry', async () => {
    await eventually(async () =>
      /SMTP server not usable: Invalid login/.test(h.logs.join('')) ? true : undefined,
    );
    const { partnerId } = await aPartner(h);
    await register(h, partnerId, 'linus@example.com');
    const [row] = await eventually(async () => {
      const rows = await mailRows(h, 'linus@example.com');
      return rows[0]?.last_error ? rows : undefined;
    });
    expect(row).toMatchObject({ status: 'pending', attempt_count: 1 });
    expect(row?.last_error).toMatch(/^EAUTH: Invalid login/);
    expect(mail.received).toHaveLength(0);
    // The log names the failure, never the recipient or the words.
    const logged = h.logs.join('');
    expect(logged).toMatch(/mail attempt failed; will retry/);
    expect(logged).not.toContain('linus@example.com');
  });
});
