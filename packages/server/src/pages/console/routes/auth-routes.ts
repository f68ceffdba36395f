// Signing in and out of the console: email and password (then a TOTP code when the person turned it on),
// or in sandbox mode the admin token; signing out here or everywhere; turning the second factor on or off.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { renderSVG } from 'uqr';
import {
  type ConsoleFrame,
  contextOf,
  cookieOptions,
  csrfRefused,
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
  sendConsolePage,
} from '../../../platform/console/console-http.ts';
import { details, notice, plainConsolePage, postForm } from '../../../platform/console/console-layout.ts';
import { SESSION_HOURS, type SignInOutcome } from '../../../platform/console/console-users.ts';
import { type Html, h, trusted } from '../../../platform/console/html-template.ts';
import { tokensEqual } from '../../../platform/crypto/hashing.ts';
import { DomainError } from '../../../platform/errors/domain-error.ts';
import { sendPage } from '../../../platform/pages/html.ts';
import { sameOrigin } from '../../../platform/pages/same-origin.ts';

type Body = Record<string, string | undefined>;

export interface AuthRoutesDeps extends ConsoleFrame {
  adminToken: string;
}

/** Where to go after signing in: a console path of ours, never another site. */
function nextPath(value: string | undefined): string {
  return value && /^\/console(\/|\?|$)/.test(value) && !value.startsWith('//') ? value : '/console';
}

export async function registerAuthRoutes(app: FastifyInstance, deps: AuthRoutesDeps): Promise<void> {
  const signInPage = (reply: FastifyReply, next: string, error?: string, status = 200): FastifyReply => {
    // The sign-in form's CSRF token: a random value in a strict cookie that the form must echo.
    const csrf = randomBytes(24).toString('base64url');
    reply.setCookie(SIGN_IN_COOKIE, csrf, { ...cookieOptions(reply.request, 3600), sameSite: 'strict' });
    const ctx = { csrfToken: csrf };
    const content = h`${error ? notice(error, 'error') : ''}
${postForm(
  ctx,
  '/console/sign-in',
  [
    { name: 'next', label: '', type: 'hidden', value: next },
    { name: 'email', label: 'Email', type: 'email', required: true, autocomplete: 'username' },
    {
      name: 'password',
      label: 'Password',
      type: 'password',
      required: true,
      autocomplete: 'current-password',
    },
  ],
  'Sign in',
)}
${
  deps.sandbox
    ? h`<h2>Sandbox</h2><p>Sign in as the operator with the admin token: <code>TESSERA_ADMIN_TOKEN</code>, or the <code>adminToken</code> field of
<code>secrets.json</code> in the data directory.</p>
${postForm(
  ctx,
  '/console/sign-in',
  [
    { name: 'next', label: '', type: 'hidden', value: next },
    { name: 'token', label: 'Admin token', type: 'password', required: true, autocomplete: 'off' },
  ],
  'Sign in with the admin token',
  { secondary: true },
)}`
    : ''
}`;
    return sendPage(reply.code(status), plainConsolePage('Sign in to Tessera', content));
  };

  const finish = (reply: FastifyReply, outcome: SignInOutcome, next: string, retry: () => FastifyReply) => {
    switch (outcome.outcome) {
      case 'signed_in':
        reply.setCookie(SESSION_COOKIE, outcome.token, cookieOptions(reply.request, SESSION_HOURS * 3600));
        reply.clearCookie(SIGN_IN_COOKIE, { path: '/console' });
        return reply.redirect(next, 303);
      case 'second_factor':
        reply.setCookie(SESSION_COOKIE, outcome.token, cookieOptions(reply.request, 300));
        return reply.redirect(`/console/sign-in/second-factor?next=${encodeURIComponent(next)}`, 303);
      case 'locked':
        reply.header(
          'retry-after',
          String(Math.max(1, Math.ceil((outcome.until.getTime() - Date.now()) / 1000))),
        );
        return signInPage(
          reply,
          next,
          `Too many failed attempts: this account is locked until ${outcome.until.toISOString().slice(11, 16)} UTC.`,
          429,
        );
      case 'refused':
        return retry();
    }
  };

  app.get<{ Querystring: Body }>('/sign-in', { config: { console: 'public' } }, async (request, reply) =>
    signInPage(reply, nextPath(request.query.next)),
  );

  app.post<{ Body: Body }>('/sign-in', { config: { console: 'public' } }, async (request, reply) => {
    const body = request.body ?? {};
    const expected = request.cookies[SIGN_IN_COOKIE];
    if (
      !expected ||
      typeof body.csrf !== 'string' ||
      !tokensEqual(body.csrf, expected) ||
      !sameOrigin(request)
    ) {
      throw csrfRefused();
    }
    const next = nextPath(body.next);
    if (body.token !== undefined) {
      if (!deps.sandbox) throw new DomainError('forbidden', 'the admin token signs in only in sandbox mode');
      const outcome = await deps.users.signInWithAdminToken(body.token, deps.adminToken);
      return finish(reply, outcome, next, () => signInPage(reply, next, 'That is not the admin token.', 401));
    }
    const outcome = await deps.users.signIn(body.email ?? '', body.password ?? '');
    return finish(reply, outcome, next, () => signInPage(reply, next, 'Wrong email or password.', 401));
  });

  const secondFactorPage = (
    request: FastifyRequest,
    reply: FastifyReply,
    next: string,
    error?: string,
    status = 200,
  ) =>
    sendPage(
      reply.code(status),
      plainConsolePage(
        'Enter your code',
        h`${error ? notice(error, 'error') : ''}<p>Open your authenticator app and enter the six-digit code for Tessera.</p>
${postForm(
  contextOf(request, deps),
  '/console/sign-in/second-factor',
  [
    { name: 'next', label: '', type: 'hidden', value: next },
    { name: 'code', label: 'Code', required: true, autocomplete: 'one-time-code', inputmode: 'numeric' },
  ],
  'Verify',
)}`,
      ),
    );

  app.get<{ Querystring: Body }>(
    '/sign-in/second-factor',
    { config: { console: 'second_factor' } },
    async (request, reply) => {
      if (request.consoleSession?.stage === 'active') return reply.redirect('/console', 303);
      return secondFactorPage(request, reply, nextPath(request.query.next));
    },
  );

  app.post<{ Body: Body }>(
    '/sign-in/second-factor',
    { config: { console: 'second_factor' } },
    async (request, reply) => {
      const session = request.consoleSession;
      if (!session) throw new DomainError('unauthenticated', 'sign in first');
      const next = nextPath(request.body?.next);
      const outcome = await deps.users.verifySecondFactor(session.token, request.body?.code ?? '');
      if (outcome.outcome === 'locked') {
        reply.clearCookie(SESSION_COOKIE, { path: '/console' });
      }
      return finish(reply, outcome, next, () =>
        secondFactorPage(request, reply, next, 'That code is not right.', 401),
      );
    },
  );

  app.post('/sign-out', async (request, reply) => {
    if (request.consoleSession) await deps.users.signOut(request.consoleSession.token);
    reply.clearCookie(SESSION_COOKIE, { path: '/console' });
    return reply.redirect('/console/sign-in', 303);
  });

  app.post('/account/sign-out-everywhere', async (request, reply) => {
    await deps.users.signOutEverywhere(contextOf(request, deps).viewer);
    reply.clearCookie(SESSION_COOKIE, { path: '/console' });
    return reply.redirect('/console/sign-in', 303);
  });

  const accountPage = async (request: FastifyRequest, reply: FastifyReply, extra?: Html, status = 200) => {
    const ctx = contextOf(request, deps);
    const { viewer } = ctx;
    const everywhere = postForm(ctx, '/console/account/sign-out-everywhere', [], 'Sign out everywhere', {
      danger: true,
    });
    if (!viewer.userId) {
      return sendConsolePage(
        request,
        reply,
        deps,
        'Sign-in and security',
        h`${extra ?? ''}<p>You signed in with the sandbox’s admin token: there is no password or second factor to manage.
Operators create console users with <code>tessera admin create-console-user</code> or <code>POST /admin/console-users</code>.</p>
<h2>Sessions</h2><p>End every session opened with the admin token, this one included.</p>${everywhere}`,
        status,
      );
    }
    const user = await deps.users.user(viewer.userId);
    const enrol = deps.users.newTotpSecret(user.email);
    const twoFactor = user.twoFactor
      ? h`<p>Two-step sign-in is <strong>on</strong>.</p>${postForm(
          ctx,
          '/console/account/totp/disable',
          [
            {
              name: 'password',
              label: 'Your password',
              type: 'password',
              required: true,
              autocomplete: 'current-password',
            },
          ],
          'Turn two-step sign-in off',
          { danger: true },
        )}`
      : h`<p>Two-step sign-in is <strong>off</strong>. Scan this code with an authenticator app, or type the secret in, then
enter the code it shows.</p>
<div class="qr" role="img" aria-label="QR code of the authenticator secret">${trusted(renderSVG(enrol.uri))}</div>
<p>Secret: <code class="secret" data-field="totp-secret">${enrol.secret}</code></p>
${postForm(
  ctx,
  '/console/account/totp',
  [
    { name: 'secret', label: '', type: 'hidden', value: enrol.secret },
    {
      name: 'code',
      label: 'Code from the app',
      required: true,
      autocomplete: 'one-time-code',
      inputmode: 'numeric',
    },
  ],
  'Turn two-step sign-in on',
)}`;
    return sendConsolePage(
      request,
      reply,
      deps,
      'Sign-in and security',
      h`${extra ?? ''}${details([
        ['Email', user.email],
        ['Role', user.role],
        ['Tenant', user.tenant ? `${user.tenant.kind} ${user.tenant.id}` : 'every tenant'],
      ])}<h2>Two-step sign-in</h2>${twoFactor}<h2>Sessions</h2><p>End every session of yours, on every device.</p>${everywhere}`,
      status,
    );
  };

  app.get('/account', async (request, reply) => accountPage(request, reply));

  app.post<{ Body: Body }>('/account/totp', async (request, reply) => {
    const userId = contextOf(request, deps).viewer.userId;
    if (!userId) throw new DomainError('forbidden', 'the admin token has no second factor');
    try {
      await deps.users.enableTotp(userId, request.body?.secret ?? '', request.body?.code ?? '');
    } catch (err) {
      if (err instanceof DomainError && err.status === 400)
        return accountPage(request, reply, notice(err.message, 'error'), 400);
      throw err;
    }
    return accountPage(request, reply, notice('Two-step sign-in is on: the next sign-in asks for a code.'));
  });

  app.post<{ Body: Body }>('/account/totp/disable', async (request, reply) => {
    const userId = contextOf(request, deps).viewer.userId;
    if (!userId) throw new DomainError('forbidden', 'the admin token has no second factor');
    try {
      await deps.users.disableTotp(userId, request.body?.password ?? '');
    } catch (err) {
      if (err instanceof DomainError && err.status === 400)
        return accountPage(request, reply, notice(err.message, 'error'), 400);
      throw err;
    }
    return accountPage(request, reply, notice('Two-step sign-in is off.'));
  });
}
