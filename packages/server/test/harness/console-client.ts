// The console as a browser speaks to it over plain HTTP (no Chromium): cookies, CSRF tokens, same-origin
// form posts, redirects not followed.
export class ConsoleClient {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly baseUrl: string) {}

  /** Signed in as the operator, with the admin token. */
  static async operator(h: { baseUrl: string; adminToken: string }): Promise<ConsoleClient> {
    const client = new ConsoleClient(h.baseUrl);
    const answer = await client.signIn({ token: h.adminToken });
    if (answer.status !== 303) throw new Error(`operator sign-in answered ${answer.status}`);
    return client;
  }

  /** A new member of a merchant, store or partner with this role (made through the admin API), signed in */
  static async member(
    h: {
      baseUrl: string;
      admin: (
        method: string,
        path: string,
        options: { json: unknown },
      ) => Promise<{ status: number; text: string }>;
    },
    tenant: { kind: 'merchant' | 'store' | 'partner'; id: string },
    role: 'viewer' | 'developer' | 'finance' | 'admin',
  ): Promise<ConsoleClient> {
    const email = `${role}-${tenant.kind}-${tenant.id}-${Math.random().toString(36).slice(2, 8)}@members.example`;
    const password = 'correct horse battery staple';
    const made = await h.admin('POST', '/console-users', { json: { email, password, role, tenant } });
    if (made.status !== 201) throw new Error(`the member was not made: ${made.status} ${made.text}`);
    const client = new ConsoleClient(h.baseUrl);
    const answer = await client.signIn({ email, password });
    if (answer.status !== 303) throw new Error(`the member's sign-in answered ${answer.status}`);
    return client;
  }

  async get(path: string) {
    return this.send('GET', path);
  }

  async post(path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
    return this.send('POST', path, new URLSearchParams(form).toString(), headers);
  }

  /** A same-origin POST of a body of its own media type (an upload, or a hostile one). */
  async postBody(path: string, contentType: string, body: string) {
    return this.send('POST', path, body, { 'content-type': contentType });
  }

  /** The CSRF token of the page at `path` (the first form's). */
  async csrf(path: string): Promise<string> {
    return /name="csrf" value="([^"]+)"/.exec((await this.get(path)).text)?.[1] ?? '';
  }

  async signIn(form: Record<string, string>) {
    return this.post('/console/sign-in', { csrf: await this.csrf('/console/sign-in'), ...form });
  }

  private async send(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'sec-fetch-site': 'same-origin',
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded', origin: this.baseUrl } : {}),
        ...headers,
      },
      ...(body ? { body } : {}),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const [name = '', value = ''] = pair.split('=');
      if (/Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return {
      status: response.status,
      location: response.headers.get('location'),
      text: await response.text(),
    };
  }
}
