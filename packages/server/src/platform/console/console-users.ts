// The console's people and their signed-in browsers: who may sign in (argon2id passwords, an optional
// TOTP second factor, a lockout after repeated failures), what each sees (an operator every tenant, a
// member one partner, merchant or store), and sessions kept only as the SHA-256 of their cookie.
// Human security runs on the wall clock, not the sandbox clock: an authenticator app on a phone and the
// time a person was away know nothing of a simulated world.
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { noteChange } from '../audit/audit-changes.ts';
import type { Encryptor } from '../crypto/encryption.ts';
import {
  hashPassword,
  hashToken,
  randomAlphanumeric,
  tokensEqual,
  verifyPassword,
} from '../crypto/hashing.ts';
import type { Db, Executor } from '../db/database.ts';
import type { ConsoleRole } from '../db/schema.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import { newId } from '../ids.ts';
import { CONSOLE_ROLES, OPERATOR_ROLES } from './console-roles.ts';

export type { ConsoleRole };

export type TenantKind = 'partner' | 'merchant' | 'store';

/** Who is looking: what every console query and action is scoped by. */
export type Viewer = (
  | { role: 'operator'; userId: string | null; email: string }
  | { role: 'member'; userId: string; email: string; tenant: { kind: TenantKind; id: string } }
) & {
  /** What they may do (docs/console.md, Roles) */
  access: ConsoleRole;
};

export interface ConsoleUser {
  id: string;
  email: string;
  role: ConsoleRole;
  tenant: { kind: TenantKind; id: string } | null;
  twoFactor: boolean;
  lockedUntil: Date | null;
  createdAt: Date;
}

export interface Session {
  viewer: Viewer;
  csrfToken: string;
  stage: 'totp' | 'active';
}

export type SignInOutcome =
  | { outcome: 'signed_in'; token: string }
  | { outcome: 'second_factor'; token: string }
  | { outcome: 'refused' }
  | { outcome: 'locked'; until: Date };

/** Wrong passwords or codes in a row before the account locks, and for how long. */
export const MAX_FAILED_SIGNINS = 5;
export const LOCKOUT_MINUTES = 15;
/** A session's life, and the time a right password waits for its second factor. */
export const SESSION_HOURS = 12;
const SECOND_FACTOR_MINUTES = 5;
const MIN_PASSWORD_LENGTH = 12;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{2,}$/;

const TOTP_ISSUER = 'Tessera';
const totpOf = (secret: string, email: string) =>
  new TOTP({ issuer: TOTP_ISSUER, label: email, secret: Secret.fromBase32(secret) });

export interface ConsoleUsersDeps {
  db: Db;
  encryptor: Encryptor;
  now?: () => Date;
}

export class ConsoleUsers {
  private readonly now: () => Date;
  // Compared against when an email is unknown, so that answer takes as long as a wrong password.
  private readonly decoyHash = hashPassword(randomBytes(16).toString('hex'));

  constructor(private readonly deps: ConsoleUsersDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** The operator adds a person; without a password one is generated and answered once. */
  async create(
    input: {
      email: string;
      password?: string | undefined;
      /** `member`: a tenant's admin (the name before roles) */
      role: ConsoleRole | 'member';
      tenant?: { kind: TenantKind; id: string } | undefined;
    },
    db: Executor = this.deps.db,
  ): Promise<{ user: ConsoleUser; password?: string }> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email)) throw invalid('email', 'email must be an email address');
    if (input.password !== undefined && input.password.length < MIN_PASSWORD_LENGTH) {
      throw invalid('password', `password must have at least ${MIN_PASSWORD_LENGTH} characters`);
    }
    const access: ConsoleRole = input.role === 'member' ? 'admin' : input.role;
    const operator = OPERATOR_ROLES.includes(access);
    if (!operator && !input.tenant) throw invalid('tenant', 'a member belongs to one tenant');
    if (operator && input.tenant) throw invalid('tenant', 'an operator sees every tenant');
    if (input.tenant && !(await this.tenantExists(input.tenant))) {
      throw invalid('tenant.id', `no ${input.tenant.kind} ${input.tenant.id}`);
    }
    const generated = input.password === undefined ? randomAlphanumeric(20) : undefined;
    const row = await db
      .insertInto('console_users')
      .values({
        id: newId('consoleUser'),
        email,
        password_hash: await hashPassword(input.password ?? generated ?? ''),
        role: operator ? 'operator' : 'member',
        access,
        tenant_kind: input.tenant?.kind ?? null,
        tenant_id: input.tenant?.id ?? null,
        totp_secret_enc: null,
        created_at: this.now(),
      })
      .onConflict((oc) => oc.column('email').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!row)
      throw new DomainError('conflict', `a console user with email ${email} exists`, { field: 'email' });
    return { user: toUser(row), ...(generated ? { password: generated } : {}) };
  }

  /** The people of one tenant, or the operator's own (tenant null), by email. */
  async listOf(tenant: { kind: TenantKind; id: string } | null): Promise<ConsoleUser[]> {
    let query = this.deps.db.selectFrom('console_users').selectAll();
    query = tenant
      ? query.where('tenant_kind', '=', tenant.kind).where('tenant_id', '=', tenant.id)
      : query.where('role', '=', 'operator');
    return (await query.orderBy('email').execute()).map(toUser);
  }

  async list(): Promise<ConsoleUser[]> {
    const rows = await this.deps.db.selectFrom('console_users').selectAll().orderBy('email').execute();
    return rows.map(toUser);
  }

  /** Gives a person another role of their kind (an operator's, or a tenant member's); answers them. */
  async setRole(id: string, role: ConsoleRole): Promise<ConsoleUser> {
    const user = await this.deps.db
      .selectFrom('console_users')
      .select(['role', 'access', 'email'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!user) throw notFound('console user');
    if ((user.role === 'operator') !== OPERATOR_ROLES.includes(role)) {
      throw invalid(
        'role',
        user.role === 'operator'
          ? `an operator's role is one of ${OPERATOR_ROLES.join(', ')}`
          : "a tenant member's role is one of viewer, developer, finance, admin",
      );
    }
    const row = await this.deps.db
      .updateTable('console_users')
      .set({ access: role })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    noteChange(`role of ${user.email}`, user.access, role);
    return toUser(row);
  }

  /** Removes a person; their sessions go with them. */
  async remove(id: string): Promise<void> {
    const removed = await this.deps.db.deleteFrom('console_users').where('id', '=', id).executeTakeFirst();
    if (removed.numDeletedRows === 0n) throw notFound('console user');
  }

  async signIn(emailInput: string, password: string): Promise<SignInOutcome> {
    const email = emailInput.trim().toLowerCase();
    const user = await this.deps.db
      .selectFrom('console_users')
      .selectAll()
      .where('email', '=', email)
      .executeTakeFirst();
    if (!user) {
      await verifyPassword(await this.decoyHash, password);
      return { outcome: 'refused' };
    }
    const now = this.now();
    if (user.locked_until && user.locked_until > now) return { outcome: 'locked', until: user.locked_until };
    if (!(await verifyPassword(user.password_hash, password))) return this.failed(user.id);
    await this.succeeded(user.id);
    if (user.totp_secret_enc) {
      return { outcome: 'second_factor', token: await this.openSession(user.id, 'totp') };
    }
    return { outcome: 'signed_in', token: await this.openSession(user.id, 'active') };
  }

  /** Sandbox only (the caller checks the mode): the admin token signs in as an operator. */
  async signInWithAdminToken(given: string, adminToken: string): Promise<SignInOutcome> {
    if (!tokensEqual(given, adminToken)) return { outcome: 'refused' };
    return { outcome: 'signed_in', token: await this.openSession(null, 'active') };
  }

  /** The second step: a TOTP code for the session a right password opened. */
  async verifySecondFactor(token: string, code: string): Promise<SignInOutcome> {
    const session = await this.findSession(token);
    if (session?.stage !== 'totp' || !session.user_id) return { outcome: 'refused' };
    const user = await this.row(session.user_id);
    if (user.locked_until && user.locked_until > this.now()) {
      return { outcome: 'locked', until: user.locked_until };
    }
    const secret = user.totp_secret_enc ? this.deps.encryptor.decrypt(user.totp_secret_enc, user.id) : '';
    const step = this.acceptedStep(secret, user.email, code);
    // A code is good once: a step at or before the last one accepted is refused.
    if (step === undefined || (user.totp_last_step !== null && step <= Number(user.totp_last_step))) {
      return this.failed(user.id);
    }
    await this.deps.db
      .updateTable('console_users')
      .set({ totp_last_step: step, failed_signins: 0, locked_until: null })
      .where('id', '=', user.id)
      .execute();
    const active = await this.deps.db
      .updateTable('console_sessions')
      .set({ stage: 'active', expires_at: hoursAfter(this.now(), SESSION_HOURS) })
      .where('id_hash', '=', hashToken(token))
      .where('stage', '=', 'totp')
      .executeTakeFirst();
    return active.numUpdatedRows === 1n ? { outcome: 'signed_in', token } : { outcome: 'refused' };
  }

  /** The session a cookie names, while it lasts. */
  async session(token: string): Promise<Session | undefined> {
    const row = await this.findSession(token);
    if (!row) return undefined;
    if (!row.user_id) {
      return {
        viewer: { role: 'operator', access: 'operator', userId: null, email: 'admin token' },
        csrfToken: row.csrf_token,
        stage: row.stage,
      };
    }
    const user = await this.deps.db
      .selectFrom('console_users')
      .selectAll()
      .where('id', '=', row.user_id)
      .executeTakeFirst();
    if (!user) return undefined;
    return { viewer: viewerOf(user), csrfToken: row.csrf_token, stage: row.stage };
  }

  async signOut(token: string): Promise<void> {
    await this.deps.db.deleteFrom('console_sessions').where('id_hash', '=', hashToken(token)).execute();
  }

  /** Ends every session of this person (the admin-token sign-ins count as one person). */
  async signOutEverywhere(viewer: Viewer): Promise<number> {
    const deleted = await this.deps.db
      .deleteFrom('console_sessions')
      .where((eb) => (viewer.userId ? eb('user_id', '=', viewer.userId) : eb('user_id', 'is', null)))
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }

  /** A new TOTP secret and its otpauth URI (for an authenticator app); kept only once confirmed. */
  newTotpSecret(email: string): { secret: string; uri: string } {
    const secret = new Secret({ size: 20 }).base32;
    return { secret, uri: totpOf(secret, email).toString() };
  }

  /** Turns the second factor on, once a code from the new secret proves the app has it. */
  async enableTotp(userId: string, secret: string, code: string): Promise<void> {
    const user = await this.row(userId);
    if (!/^[A-Z2-7]{32}$/.test(secret)) throw invalid('secret', 'the secret is not one this page made');
    const step = this.acceptedStep(secret, user.email, code);
    if (step === undefined)
      throw invalid('code', 'the code does not match: check the app’s clock and try again');
    await this.deps.db
      .updateTable('console_users')
      .set({ totp_secret_enc: this.deps.encryptor.encrypt(secret, user.id), totp_last_step: step })
      .where('id', '=', userId)
      .execute();
  }

  /** Turns the second factor off; the password must be given again. */
  async disableTotp(userId: string, password: string): Promise<void> {
    const user = await this.row(userId);
    if (!(await verifyPassword(user.password_hash, password))) throw invalid('password', 'wrong password');
    await this.deps.db
      .updateTable('console_users')
      .set({ totp_secret_enc: null, totp_last_step: null })
      .where('id', '=', userId)
      .execute();
  }

  async user(id: string): Promise<ConsoleUser> {
    const row = await this.deps.db
      .selectFrom('console_users')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('console user');
    return toUser(row);
  }

  private row(id: string) {
    return this.deps.db
      .selectFrom('console_users')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  }

  private acceptedStep(secret: string, email: string, code: string): number | undefined {
    if (!/^\d{6}$/.test(code.trim()) || secret === '') return undefined;
    const now = this.now().getTime();
    const delta = totpOf(secret, email).validate({ token: code.trim(), timestamp: now, window: 1 });
    return delta === null ? undefined : Math.floor(now / 30_000) + delta;
  }

  private async failed(userId: string): Promise<SignInOutcome> {
    const row = await this.deps.db
      .updateTable('console_users')
      .set((eb) => ({ failed_signins: eb('failed_signins', '+', 1) }))
      .where('id', '=', userId)
      .returning('failed_signins')
      .executeTakeFirstOrThrow();
    if (row.failed_signins < MAX_FAILED_SIGNINS) return { outcome: 'refused' };
    const until = new Date(this.now().getTime() + LOCKOUT_MINUTES * 60_000);
    // Locked: every session of the person ends too (one half-signed-in may be the attacker's).
    await this.deps.db
      .updateTable('console_users')
      .set({ locked_until: until, failed_signins: 0 })
      .where('id', '=', userId)
      .execute();
    await this.deps.db
      .deleteFrom('console_sessions')
      .where('user_id', '=', userId)
      .where('stage', '=', 'totp')
      .execute();
    return { outcome: 'locked', until };
  }

  private async succeeded(userId: string): Promise<void> {
    await this.deps.db
      .updateTable('console_users')
      .set({ failed_signins: 0, locked_until: null })
      .where('id', '=', userId)
      .execute();
  }

  private async openSession(userId: string | null, stage: 'totp' | 'active'): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const now = this.now();
    await this.deps.db
      .insertInto('console_sessions')
      .values({
        id_hash: hashToken(token),
        user_id: userId,
        csrf_token: randomBytes(24).toString('base64url'),
        stage,
        created_at: now,
        expires_at:
          stage === 'active'
            ? hoursAfter(now, SESSION_HOURS)
            : new Date(now.getTime() + SECOND_FACTOR_MINUTES * 60_000),
      })
      .execute();
    return token;
  }

  private async findSession(token: string) {
    if (!/^[\w-]{43}$/.test(token)) return undefined;
    return this.deps.db
      .selectFrom('console_sessions')
      .selectAll()
      .where('id_hash', '=', hashToken(token))
      .where('expires_at', '>', this.now())
      .executeTakeFirst();
  }

  private async tenantExists(tenant: { kind: TenantKind; id: string }): Promise<boolean> {
    const { db } = this.deps;
    if (tenant.kind === 'merchant') {
      if (!/^\d{1,15}$/.test(tenant.id)) return false;
      return !!(await db
        .selectFrom('merchants')
        .select('id')
        .where('id', '=', Number(tenant.id))
        .executeTakeFirst());
    }
    const table = tenant.kind === 'partner' ? 'partners' : 'stores';
    return !!(await db.selectFrom(table).select('id').where('id', '=', tenant.id).executeTakeFirst());
  }
}

interface UserRow {
  id: string;
  email: string;
  role: 'operator' | 'member';
  access: ConsoleRole;
  tenant_kind: TenantKind | null;
  tenant_id: string | null;
  totp_secret_enc: string | null;
  locked_until: Date | null;
  created_at: Date;
}

function toUser(row: UserRow): ConsoleUser {
  return {
    id: row.id,
    email: row.email,
    role: row.access,
    tenant: row.tenant_kind && row.tenant_id ? { kind: row.tenant_kind, id: row.tenant_id } : null,
    twoFactor: row.totp_secret_enc !== null,
    lockedUntil: row.locked_until,
    createdAt: row.created_at,
  };
}

function viewerOf(row: UserRow): Viewer {
  if (row.role === 'member' && row.tenant_kind && row.tenant_id) {
    return {
      role: 'member',
      access: row.access,
      userId: row.id,
      email: row.email,
      tenant: { kind: row.tenant_kind, id: row.tenant_id },
    };
  }
  return { role: 'operator', access: row.access, userId: row.id, email: row.email };
}

const hoursAfter = (date: Date, hours: number) => new Date(date.getTime() + hours * 3_600_000);

const invalid = (field: string, message: string) => new DomainError('validation_failed', message, { field });

export { CONSOLE_ROLES, OPERATOR_ROLES };
