// `tessera admin …`: onboarding from a shell — create a partner, a merchant with its sites, a store, a
// console user, or rotate a site's secret key — printing the new credentials as JSON, shown once. Works whether or not a
// server is running: it reuses a running embedded Postgres on the same data directory, or starts one
// briefly. The options are parsed by the CLI (src/cli/program.ts); this runs them.

import { hostname, userInfo } from 'node:os';
import type { z } from 'zod';
import { boot } from '../../boot.ts';
import type { Config } from '../../config.ts';
import { AUDIT_ACTIONS } from '../../platform/audit/audit-actions.ts';
import { changesIn } from '../../platform/audit/audit-changes.ts';
import { detailOf } from '../../platform/audit/audit-hooks.ts';
import { type AuditEntry, appendAudit, verifyAudit } from '../../platform/audit/audit-trail.ts';
import { SandboxClock, systemClock } from '../../platform/clock/clock.ts';
import { loadSandboxClockOffset } from '../../platform/clock/sandbox-clock-state.ts';
import { type ConsoleRole, ConsoleUsers } from '../../platform/console/console-users.ts';
import { derive, Encryptor } from '../../platform/crypto/encryption.ts';
import type { Db } from '../../platform/db/database.ts';
import { openDatabase } from '../../platform/db/database.ts';
import { runTransaction } from '../../platform/db/transact.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { type Owner, TermsStore } from '../../platform/payouts/terms.ts';
import {
  pricingInput,
  scheduleInput,
  toFeeSchedule,
  toPayoutSchedule,
} from '../../platform/payouts/terms-input.ts';
import { MerchantsService } from '../../platform/tenants/merchants-service.ts';
import { PartnersService } from '../../platform/tenants/partners-service.ts';
import { StoresService } from '../../platform/tenants/stores-service.ts';
import { TenantCache } from '../../platform/tenants/tenant-cache.ts';
import { tenantChangeSettled } from '../../platform/tenants/tenant-changes.ts';
import { SsrfGuard } from '../../platform/webhooks/ssrf-guard.ts';
import { AdminUsageError } from './admin-usage-error.ts';

export type AdminAction =
  | { command: 'create-partner'; name: string; webhookUrl?: string | undefined }
  | { command: 'create-merchant'; name: string; sites: string[] }
  | {
      command: 'create-store';
      name: string;
      webhookUrl?: string | undefined;
      refundsDisabled: boolean;
      currencies: string[];
    }
  | { command: 'rotate-site-key'; merchantId: number; siteId: number; overlapSeconds: number }
  | {
      command: 'set-pricing';
      tenant: string;
      percentBps: number;
      /** CUR:amount pairs */
      fixed: string[];
      refundFees: boolean;
    }
  | {
      command: 'set-payout-schedule';
      tenant: string;
      interval: 'daily' | 'weekly' | 'monthly' | 'manual';
      weeklyAnchor: string;
      monthlyAnchor: number;
      minimum: string;
      delayDays: number;
      reservePercent: string;
      reserveDays: number;
    }
  | {
      command: 'create-console-user';
      email: string;
      password?: string | undefined;
      role: ConsoleRole;
      tenant?: { kind: 'partner' | 'merchant' | 'store'; id: string } | undefined;
    };

/** `site:<id>` or `store:<id>` of a site or store that exists. */
async function ownerOf(db: Db, tenant: string): Promise<Owner> {
  const [kind, id = ''] = tenant.split(':', 2);
  const found =
    kind === 'site' && /^\d{1,10}$/.test(id)
      ? await db.selectFrom('sites').select('id').where('id', '=', Number(id)).executeTakeFirst()
      : kind === 'store'
        ? await db.selectFrom('stores').select('id').where('id', '=', id).executeTakeFirst()
        : undefined;
  if (!found)
    throw new AdminUsageError(`--tenant ${tenant}: no such site or store (site:<id> or store:<id>)`);
  return kind === 'site' ? { kind: 'site', siteId: Number(id) } : { kind: 'store', storeId: id };
}

/** The input checked as the admin API checks it; a mistake names the option's field. */
function checked<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new AdminUsageError(`${issue?.path.join('.') || 'input'}: ${issue?.message}`);
  }
  return result.data;
}

/** Runs one admin action against the database and answers what to print (the credentials, as JSON). */
export async function runAdminAction(config: Config, action: AdminAction): Promise<unknown> {
  const guard = new SsrfGuard(config.mode === 'production', config.webhookAllowlist);
  const urls =
    action.command === 'create-merchant'
      ? action.sites.map((s) => s.split('=').slice(1).join('='))
      : 'webhookUrl' in action
        ? [action.webhookUrl]
        : [];
  for (const url of urls) {
    const problem = url ? guard.checkUrl(url) : undefined;
    if (problem) throw new AdminUsageError(`the URL ${url} ${problem}`);
  }

  const booted = await boot(config, { runMigrations: true, reuseRunningEmbedded: true });
  // Every branch awaits its work before `finally` closes the pool and the database.
  const database = openDatabase(booted.databaseUrl, { max: 2 });
  try {
    const clock =
      config.mode === 'sandbox' ? new SandboxClock(await loadSandboxClockOffset(database.db)) : systemClock;
    const encryptor = new Encryptor(booted.encryptionKey);
    const merchants = () =>
      new MerchantsService(
        clock,
        encryptor,
        derive(booted.encryptionKey, 'tessera/merchant-api-key/v1'),
        config.mode === 'production' ? 'live' : 'test',
      );
    // The command and its audit record commit together, in one unit of work (every query below joins it).
    const unit = database.createUnit();
    unit.beginLazily();
    let result: unknown;
    try {
      result = await unit.run(async () => {
        const done = await perform();
        const record = cliRecord(action, done, clock.now());
        const changes = changesIn(unit);
        if (changes.length > 0) record.detail = { ...record.detail, changes };
        await appendAudit(database.db, record);
        return done;
      });
      await unit.finish('commit');
    } catch (err) {
      await unit.finish('rollback');
      throw err;
    }
    // Running servers drop a rotated key at once when the overlap is 0: answer once they all have.
    if (action.command === 'rotate-site-key') await tenantChangeSettled(database.db);
    return result;

    async function perform(): Promise<unknown> {
      switch (action.command) {
        case 'create-partner':
          return await new PartnersService(clock, encryptor).create(database.db, {
            name: action.name,
            webhookUrl: action.webhookUrl ?? null,
          });
        case 'create-merchant': {
          const sites = (action.sites.length ? action.sites : [action.name]).map((site) => {
            const [siteName = '', ...url] = site.split('=');
            return { name: siteName, ipnUrl: url.length > 0 ? url.join('=') : null };
          });
          return await runTransaction(database.db, (tx) =>
            merchants().create(tx, { name: action.name, sites }),
          );
        }
        case 'create-store': {
          const currencies = action.currencies.map((pair) => {
            const [currency = '', network = ''] = pair.toUpperCase().split(':');
            return { currency, network };
          });
          return await new StoresService(clock, encryptor, config.mode).create(database.db, {
            name: action.name,
            webhookUrl: action.webhookUrl ?? null,
            refundsEnabled: !action.refundsDisabled,
            ...(currencies.length ? { currencies } : {}),
          });
        }
        case 'create-console-user': {
          const { user, password } = await new ConsoleUsers({ db: database.db, encryptor }).create({
            email: action.email,
            password: action.password,
            role: action.role,
            tenant: action.tenant,
          });
          return { ...user, ...(password ? { password } : {}) };
        }
        case 'set-pricing':
        case 'set-payout-schedule': {
          const owner = await ownerOf(database.db, action.tenant);
          // Nothing is cached here: every process hears of the change from Postgres (migration 0033).
          const terms = new TermsStore(
            clock,
            new TenantCache(clock, { ttlMs: 0, isListening: () => false }),
            config.moneyOut.defaults,
          );
          if (action.command === 'set-pricing') {
            const { command: _command, tenant, ...input } = action;
            const fixed = Object.fromEntries(input.fixed.map((pair) => pair.split(':') as [string, string]));
            const parsed = checked(pricingInput, { ...input, fixed });
            try {
              await terms.putFees(database.db, owner, toFeeSchedule(parsed));
            } catch (err) {
              if (err instanceof DomainError) throw new AdminUsageError(`--fixed: ${err.message}`);
              throw err;
            }
            return { tenant, pricing: parsed };
          }
          const { command: _command, tenant, ...input } = action;
          const saved = await terms.putSchedule(
            database.db,
            owner,
            toPayoutSchedule(checked(scheduleInput, input)),
          );
          return { tenant, payoutSchedule: saved.schedule };
        }
        case 'rotate-site-key':
          return await runTransaction(database.db, (tx) =>
            merchants().rotateSecretKey(tx, action.merchantId, action.siteId, action.overlapSeconds),
          );
      }
    }
  } finally {
    await database.close();
    await booted.stopDatabase();
  }
}

/**
 * `tessera audit verify [--from SEQ [--hash HASH]]`: walks the audit trail's hash chain from its first
 * record, or from a checkpoint an earlier run printed (its head). Exit 0 with the count and the head (keep
 * it: the next run starts there, and a record removed from the end is caught), or 1 naming the first record
 * that breaks the chain.
 */
export async function verifyAuditTrail(
  config: Config,
  from?: { seq: number; hash?: string | undefined },
): Promise<number> {
  const booted = await boot(config, { runMigrations: false, reuseRunningEmbedded: true });
  const database = openDatabase(booted.databaseUrl, { max: 1 });
  try {
    const verdict = await verifyAudit(database.db, from);
    if (verdict.ok) {
      const since = from ? ` after record ${from.seq}` : '';
      const head = verdict.head
        ? `; head: record ${verdict.head.seq}, hash ${verdict.head.hash}\nnext time: tessera audit verify --from ${verdict.head.seq} --hash ${verdict.head.hash}`
        : '';
      process.stdout.write(`audit trail intact: ${verdict.records} records${since}${head}\n`);
      return 0;
    }
    process.stderr.write(
      `audit trail broken at record ${verdict.brokenAt}: ${verdict.reason} (${verdict.records} records before it are intact)\n`,
    );
    return 1;
  } finally {
    await database.close();
    await booted.stopDatabase();
  }
}

/**
 * A `tessera admin` command as the audit trail records it: the shell's user and machine, the command and
 * its options (a password given is left out), the object it made.
 */
function cliRecord(action: AdminAction, result: unknown, at: Date): AuditEntry {
  const { command, ...options } = action;
  const row = AUDIT_ACTIONS[`tessera admin ${command}`];
  if (!row) throw new Error(`tessera admin ${command} has no row in platform/audit/audit-actions.ts`);
  const object = row.object;
  const made =
    'answer' in object && result && typeof result === 'object'
      ? (result as Record<string, unknown>)[object.answer]
      : 'field' in object
        ? (options as Record<string, unknown>)[object.field]
        : undefined;
  const tenant = 'tenant' in action && typeof action.tenant === 'object' ? (action.tenant ?? null) : null;
  return {
    at,
    actorKind: 'cli',
    actor: `${shellUser()}@${hostname()}`,
    source: 'shell',
    action: row.action,
    objectId: made === undefined || made === null ? null : String(made),
    tenant,
    detail: { ...detailOf(options), command: `tessera admin ${command}` },
    outcome: 'succeeded',
    status: null,
    requestId: null,
  };
}

/** The shell's user (a container may have no passwd entry for it) */
function shellUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}
