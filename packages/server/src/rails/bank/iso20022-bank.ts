// The bank as ISO 20022 files (docs/payouts.md, Bank files). Out: the payouts pending in each currency go
// into one pain.001 in TESSERA_BANK_OUTBOX_DIR. The file and its payouts are recorded first (bank_files
// 'writing', each payout's bank_file_id), then the file is written under a temporary name, synced and
// renamed into place, then recorded 'written' with its payouts in transit. A crash anywhere in between
// leaves a 'writing' file that the next dispatch writes again, byte for byte (same message id), and a
// payout is never in two files. In: each file dropped into TESSERA_BANK_INBOX_DIR is read once (by its
// content's hash) and applied in one transaction, then moved to processed/; a file that cannot be read
// goes to rejected/ and lines that match no payout are kept with it, both reported.
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { newId } from '../../platform/ids.ts';
import { formatAmount, formatAmountIn, parseAmount } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import { addDays } from '../../platform/payouts/balance-transactions.ts';
import type { DebtorAccount } from '../../platform/payouts/money-out-config.ts';
import type { PayoutLifecycle } from '../../platform/payouts/payout-lifecycle.ts';
import { type BankFile, BankFileError, type BankNews, readBankFile } from './bank-statements.ts';
import { writePain001 } from './pain001.ts';
import type { BankRail } from './port.ts';

export interface Iso20022Deps {
  db: Db;
  transact: Transact;
  clock: Clock;
  encryptor: Encryptor;
  lifecycle: PayoutLifecycle;
  logger: Logger;
  debtor: DebtorAccount;
  outboxDir: string;
  inboxDir: string;
  /** Counts inbox files by outcome (metric) */
  onInboxFile?: (outcome: 'applied' | 'rejected' | 'unmatched') => void;
}

export class Iso20022Bank implements BankRail {
  readonly name = 'iso20022';

  constructor(private readonly deps: Iso20022Deps) {}

  async dispatch(): Promise<number> {
    await mkdir(this.deps.outboxDir, { recursive: true });
    let sent = 0;
    // First what a crash left half done, then what is new.
    const unfinished = await this.deps.db
      .selectFrom('bank_files')
      .select('id')
      .where('status', '=', 'writing')
      .execute();
    for (const { id } of unfinished) sent += await this.finish(id);
    const currencies = await this.deps.db
      .selectFrom('payouts')
      .select('currency')
      .distinct()
      .where('status', '=', 'pending')
      .where('bank_file_id', 'is', null)
      .execute();
    for (const { currency } of currencies) {
      const fileId = await this.deps.transact((tx) => this.recordFile(tx, currency));
      if (fileId) sent += await this.finish(fileId);
    }
    return sent;
  }

  /** Records a new file with the currency's pending payouts (up to 10,000, the rest in the next file). */
  private async recordFile(tx: Tx, currency: string): Promise<string | undefined> {
    const payouts = await tx
      .selectFrom('payouts')
      .select(['id', 'amount'])
      .where('status', '=', 'pending')
      .where('currency', '=', currency)
      .where('bank_file_id', 'is', null)
      .orderBy('id')
      .limit(10_000)
      .forUpdate()
      .skipLocked()
      .execute();
    if (payouts.length === 0) return undefined;
    const now = this.deps.clock.now();
    const id = newId('bankFile', now.getTime());
    await tx
      .insertInto('bank_files')
      .values({
        id,
        message_id: id,
        currency,
        file_name: `pain.001.${currency}.${id}.xml`,
        payout_count: payouts.length,
        total: payouts.reduce((sum, p) => sum + BigInt(p.amount), 0n).toString(),
        status: 'writing',
        created_at: now,
      })
      .execute();
    await tx
      .updateTable('payouts')
      .set({ bank_file_id: id })
      .where(
        'id',
        'in',
        payouts.map((p) => p.id),
      )
      .execute();
    return id;
  }

  /** Writes the recorded file (again, after a crash) and marks it and its payouts sent. */
  private async finish(fileId: string): Promise<number> {
    const file = await this.deps.db
      .selectFrom('bank_files')
      .selectAll()
      .where('id', '=', fileId)
      .executeTakeFirstOrThrow();
    const payouts = await this.deps.db
      .selectFrom('payouts')
      .selectAll()
      .where('bank_file_id', '=', fileId)
      .orderBy('id')
      .execute();
    const executionDate = file.created_at.toISOString().slice(0, 10);
    const xml = writePain001({
      messageId: file.message_id,
      createdAt: file.created_at,
      executionDate,
      currency: file.currency,
      debtor: this.deps.debtor,
      transfers: payouts.map((p) => ({
        endToEndId: p.id,
        amount: BigInt(p.amount),
        creditorName: p.holder_name,
        creditorIban: this.deps.encryptor.decrypt(p.iban_enc, `bank-account:${p.owner}`),
        creditorBic: p.bic,
        remittance: `Tessera payout ${p.id}`,
      })),
    });
    const target = join(this.deps.outboxDir, file.file_name);
    if (!(await exists(target))) await writeAtomically(target, xml);
    const arrival = addDays(new Date(`${executionDate}T00:00:00Z`), 1)
      .toISOString()
      .slice(0, 10);
    await this.deps.transact(async (tx) => {
      for (const payout of payouts) {
        if (payout.status === 'pending') {
          await this.deps.lifecycle.step(tx, payout.id, 'in_transit', { arrivalDate: arrival });
        }
      }
      await tx.updateTable('bank_files').set({ status: 'written' }).where('id', '=', fileId).execute();
    });
    this.deps.logger.info(
      {
        bankFile: file.file_name,
        payouts: payouts.length,
        total: formatAmountIn(BigInt(file.total), file.currency),
      },
      'bank file written',
    );
    return payouts.length;
  }

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
      await this.record(sha256, name, 'unknown', 'rejected', err.message, []);
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

  private async record(
    sha256: string,
    name: string,
    kind: string,
    status: 'applied' | 'rejected',
    detail: string,
    unmatched: BankNews[],
  ) {
    await this.deps.transact((tx) => this.recordIn(tx, sha256, name, kind, status, detail, unmatched));
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

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Temporary name, fsync, rename: a reader of the outbox never sees half a file. */
async function writeAtomically(target: string, content: string): Promise<void> {
  const temporary = `${target}.partial`;
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, target);
}

async function moveTo(inboxDir: string, folder: 'processed' | 'rejected', name: string): Promise<void> {
  await mkdir(join(inboxDir, folder), { recursive: true });
  await rename(join(inboxDir, name), join(inboxDir, folder, name));
}
