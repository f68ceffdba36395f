// Bank files in (docs/payouts.md, Bank files): each file dropped into TESSERA_BANK_INBOX_DIR is read
// once (by its content's hash) and applied in one transaction, then moved to processed/; a file that
// cannot be read goes to rejected/, and lines that match no payout are kept with its record; both are
// logged, counted and reported by reconcile.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { formatAmount, formatAmountIn, parseAmount } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { PayoutLifecycle } from '../../platform/payouts/payout-lifecycle.ts';
import { type BankFile, BankFileError, type BankNews, readBankFile } from './bank-statements.ts';

export interface BankInboxDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  lifecycle: PayoutLifecycle;
  logger: Logger;
  inboxDir: string;
  /** Counts inbox files by outcome (metric) */
  onInboxFile?: ((outcome: 'applied' | 'rejected' | 'unmatched') => void) | undefined;
}

export class BankInbox {
  constructor(private readonly deps: BankInboxDeps) {}

  async collect(): Promise<number> {
    await mkdir(this.deps.inboxDir, { recursive: true });
    const names = (await readdir(this.deps.inboxDir, { withFileTypes: true }))
      .filter((entry) => entry.isFile() && entry.name.toLowerCase().endsWith('.xml'))
      .map((entry) => entry.name)
      .sort();
    let changed = 0;
    for (const name of names) changed += await this.readOne(name);
    return changed;
  }

  private async readOne(name: string): Promise<number> {
    const path = join(this.deps.inboxDir, name);
    const text = await readFile(path, 'utf8');
    const sha256 = createHash('sha256').update(text).digest('hex');
    const seen = await this.deps.db
      .selectFrom('bank_inbox_files')
      .select('status')
      .where('sha256', '=', sha256)
      .executeTakeFirst();
    if (seen) {
      await moveTo(this.deps.inboxDir, seen.status === 'applied' ? 'processed' : 'rejected', name);
      return 0;
    }
    let file: BankFile;
    try {
      file = readBankFile(text);
    } catch (err) {
      if (!(err instanceof BankFileError)) throw err;
      await this.deps.transact((tx) =>
        this.recordIn(tx, sha256, name, 'unknown', 'rejected', err.message, []),
      );
      await moveTo(this.deps.inboxDir, 'rejected', name);
      this.deps.logger.warn({ bankFile: name, reason: err.message }, 'bank file rejected');
      this.deps.onInboxFile?.('rejected');
      return 0;
    }
    const outcome = await this.deps.transact(async (tx) => {
      const unmatched: BankNews[] = [];
      let changed = 0;
      for (const news of file.news) {
        const result = await this.apply(tx, news);
        if (result === 'unmatched') unmatched.push(news);
        else if (result === 'changed') changed++;
      }
      await this.recordIn(
        tx,
        sha256,
        name,
        file.kind,
        'applied',
        `${file.news.length} entries, ${changed} changed payouts, ${file.ignored} ignored`,
        unmatched,
      );
      return { changed, unmatched };
    });
    await moveTo(this.deps.inboxDir, 'processed', name);
    if (outcome.unmatched.length > 0) {
      this.deps.logger.warn(
        { bankFile: name, unmatched: outcome.unmatched },
        'bank file lines match no payout',
      );
      this.deps.onInboxFile?.('unmatched');
    } else {
      this.deps.onInboxFile?.('applied');
    }
    return outcome.changed;
  }

  /** One line of news: the payout it names moves on, or it matches nothing (wrong id, amount or currency). */
  private async apply(tx: Tx, news: BankNews): Promise<'changed' | 'unchanged' | 'unmatched'> {
    if (news.kind === 'paid_batch' || news.kind === 'failed_message') {
      const payouts = await tx
        .selectFrom('payouts')
        .select(['id', 'amount', 'currency', 'status'])
        .where('bank_file_id', '=', news.messageId)
        .execute();
      if (payouts.length === 0) return 'unmatched';
      if (news.kind === 'paid_batch') {
        const total = payouts.reduce((sum, p) => sum + BigInt(p.amount), 0n);
        if (formatAmountIn(total, payouts[0]?.currency ?? 'EUR') !== normalize(news.amount, news.currency))
          return 'unmatched';
      }
      let changed = false;
      for (const payout of payouts) {
        if (payout.status !== 'in_transit' && payout.status !== 'pending') continue;
        const stepped =
          news.kind === 'paid_batch'
            ? payout.status === 'in_transit' &&
              (await this.deps.lifecycle.step(tx, payout.id, 'paid', {
                arrivalDate: news.bookingDate ?? undefined,
              }))
            : await this.deps.lifecycle.step(tx, payout.id, 'failed', { failureCode: news.reasonCode });
        changed = stepped || changed;
      }
      return changed ? 'changed' : 'unchanged';
    }
    const payout = await tx
      .selectFrom('payouts')
      .select(['id', 'amount', 'currency', 'status'])
      .where('id', '=', news.endToEndId)
      .executeTakeFirst();
    if (!payout) return 'unmatched';
    if (
      news.kind !== 'failed' &&
      (news.currency !== payout.currency ||
        normalize(news.amount, news.currency) !== formatAmountIn(BigInt(payout.amount), payout.currency))
    ) {
      return 'unmatched';
    }
    switch (news.kind) {
      case 'paid':
        if (payout.status !== 'in_transit') return 'unchanged';
        return (await this.deps.lifecycle.step(tx, payout.id, 'paid', {
          arrivalDate: news.bookingDate ?? undefined,
        }))
          ? 'changed'
          : 'unchanged';
      case 'failed':
        if (payout.status !== 'in_transit' && payout.status !== 'pending') return 'unchanged';
        return (await this.deps.lifecycle.step(tx, payout.id, 'failed', { failureCode: news.reasonCode }))
          ? 'changed'
          : 'unchanged';
      case 'returned':
        if (payout.status === 'returned' || payout.status === 'failed') return 'unchanged';
        return (await this.deps.lifecycle.step(tx, payout.id, 'returned', { failureCode: news.reasonCode }))
          ? 'changed'
          : 'unchanged';
    }
  }

  private async recordIn(
    tx: Tx,
    sha256: string,
    name: string,
    kind: string,
    status: 'applied' | 'rejected',
    detail: string,
    unmatched: BankNews[],
  ) {
    await tx
      .insertInto('bank_inbox_files')
      .values({
        sha256,
        file_name: name,
        kind,
        status,
        detail,
        unmatched: JSON.stringify(unmatched),
        received_at: this.deps.clock.now(),
      })
      .onConflict((oc) => oc.column('sha256').doNothing())
      .execute();
  }
}

/** "12.5" and "12.50" are the same amount: compare in the currency's own format. */
function normalize(amount: string, currency: string): string {
  const asset = findAsset(currency);
  try {
    return asset ? formatAmount(parseAmount(amount, asset, { allowZero: true }), asset) : amount;
  } catch {
    return amount;
  }
}

async function moveTo(inboxDir: string, folder: 'processed' | 'rejected', name: string): Promise<void> {
  await mkdir(join(inboxDir, folder), { recursive: true });
  await rename(join(inboxDir, name), join(inboxDir, folder, name));
}
