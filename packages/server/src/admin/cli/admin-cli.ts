// `npx tessera admin create-partner --name "Acme"` (and create-merchant, create-store, rotate-site-key):
// onboarding from a shell, printing the new tenant's credentials (or a site's new secret key) as JSON,
// shown once. Works whether or not a server is
// running: it reuses a running embedded Postgres on the same data directory, or starts one briefly.
import { parseArgs } from 'node:util';
import { boot } from '../../boot.ts';
import type { Config } from '../../config.ts';
import { SandboxClock, systemClock } from '../../platform/clock/clock.ts';
import { derive, Encryptor } from '../../platform/crypto/encryption.ts';
import { openDatabase } from '../../platform/db/database.ts';
import { runTransaction } from '../../platform/db/transact.ts';
import { MerchantsService } from '../../platform/tenants/merchants-service.ts';
import { PartnersService } from '../../platform/tenants/partners-service.ts';
import { StoresService } from '../../platform/tenants/stores-service.ts';
import { SsrfGuard } from '../../platform/webhooks/ssrf-guard.ts';
import { loadSandboxClockOffset } from '../../sandbox/http/clock-routes.ts';

const USAGE = `usage:
  tessera admin create-partner --name NAME [--webhook-url URL]
  tessera admin create-merchant --name NAME --site SITE_NAME[=IPN_URL] [--site …]
  tessera admin create-store --name NAME [--webhook-url URL] [--refunds-disabled] [--currency USDC:ETH …]
  tessera admin rotate-site-key --merchant MERCHANT_ID --site SITE_ID [--overlap-seconds 86400]
`;
const COMMANDS = ['create-partner', 'create-merchant', 'create-store', 'rotate-site-key'];

export async function runAdminCommand(config: Config, argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  let args: ReturnType<typeof parse>;
  try {
    args = parse(rest);
  } catch (err) {
    process.stderr.write(`tessera: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const name = args.values.name?.trim() ?? '';
  const rotation = command === 'rotate-site-key' ? rotationOf(args.values) : undefined;
  if (!command || !COMMANDS.includes(command) || (rotation ? rotation === 'invalid' : !name)) {
    process.stderr.write(USAGE);
    return 2;
  }
  const guard = new SsrfGuard(config.mode === 'production', config.webhookAllowlist);
  for (const url of [
    args.values['webhook-url'],
    ...(args.values.site ?? []).map((s) => s.split('=').slice(1).join('=')),
  ]) {
    const problem = url ? guard.checkUrl(url) : undefined;
    if (problem) {
      process.stderr.write(`tessera: the URL ${url} ${problem}\n`);
      return 2;
    }
  }

  const booted = await boot(config, { runMigrations: true, reuseRunningEmbedded: true });
  const database = openDatabase(booted.databaseUrl, { max: 2 });
  try {
    const clock =
      config.mode === 'sandbox' ? new SandboxClock(await loadSandboxClockOffset(database.db)) : systemClock;
    const encryptor = new Encryptor(booted.encryptionKey);
    let result: unknown;
    if (command === 'create-partner') {
      result = await new PartnersService(clock, encryptor).create(database.db, {
        name,
        webhookUrl: args.values['webhook-url'] ?? null,
      });
    } else if (command === 'create-merchant' || rotation) {
      const merchants = new MerchantsService(
        clock,
        encryptor,
        derive(booted.encryptionKey, 'tessera/merchant-api-key/v1'),
        config.mode === 'production' ? 'live' : 'test',
      );
      if (rotation && rotation !== 'invalid') {
        result = await runTransaction(database.db, (tx) =>
          merchants.rotateSecretKey(tx, rotation.merchantId, rotation.siteId, rotation.overlapSeconds),
        );
      } else {
        const sites = (args.values.site ?? [name]).map((site) => {
          const [siteName = '', ...url] = site.split('=');
          return { name: siteName, ipnUrl: url.length > 0 ? url.join('=') : null };
        });
        result = await runTransaction(database.db, (tx) => merchants.create(tx, { name, sites }));
      }
    } else {
      const currencies = args.values.currency?.map((pair) => {
        const [currency = '', network = ''] = pair.toUpperCase().split(':');
        return { currency, network };
      });
      result = await new StoresService(clock, encryptor, config.mode).create(database.db, {
        name,
        webhookUrl: args.values['webhook-url'] ?? null,
        refundsEnabled: !args.values['refunds-disabled'],
        ...(currencies ? { currencies } : {}),
      });
    }
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`tessera: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await database.close();
    await booted.stopDatabase();
  }
}

function rotationOf(values: ReturnType<typeof parse>['values']) {
  const merchantId = Number(values.merchant);
  const siteId = Number(values.site?.[0]);
  const overlapSeconds = Number(values['overlap-seconds'] ?? 86_400);
  const valid = [merchantId, siteId].every((n) => Number.isSafeInteger(n) && n > 0);
  if (!valid || !Number.isSafeInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > 30 * 86_400)
    return 'invalid' as const;
  return { merchantId, siteId, overlapSeconds };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      name: { type: 'string' },
      merchant: { type: 'string' },
      'overlap-seconds': { type: 'string' },
      'webhook-url': { type: 'string' },
      site: { type: 'string', multiple: true },
      currency: { type: 'string', multiple: true },
      'refunds-disabled': { type: 'boolean' },
    },
    strict: true,
  });
}
