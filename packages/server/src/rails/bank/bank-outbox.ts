// Bank files out (docs/payouts.md, Bank files): the payouts pending in each currency go into one
// pain.001 in TESSERA_BANK_OUTBOX_DIR. The file and its payouts are recorded first (bank_files 'writing',
// each payout's bank_file_id), then the file is written under a temporary name, synced and renamed into
// place, then recorded 'written' with its payouts in transit. A crash anywhere in between leaves a
// 'writing' file that the next dispatch writes again, byte for byte (same message id), and a payout is
// never in two files.

import { mkdir, open, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tx } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import { inSpan, SpanKind } from '../../platform/observability/tracing.ts';
import { addDays } from '../../platform/payouts/balance-transactions.ts';
import type { Iso20022Deps } from './iso20022-deps.ts';
import { writePain001 } from './pain001.ts';

export class BankOutbox {
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
    for (const { id } of unfinished) sent += await this.finishInSpan(id);
    const currencies = await this.deps.db
      .selectFrom('payouts')
      .select('currency')
      .distinct()
      .where('status', '=', 'pending')
      .where('bank_file_id', 'is', null)
      .execute();
    for (const { currency } of currencies) {
      const fileId = await this.deps.transact((tx) => this.recordFile(tx, currency));
      if (fileId) sent += await this.finishInSpan(fileId);
    }
    return sent;
  }

  /** Each file written and handed to the bank is a trace of its own (a sweep writes it). */
  private finishInSpan(fileId: string): Promise<number> {
    return inSpan('rail bank.file', { 'tessera.bank_file_id': fileId }, () => this.finish(fileId), {
      kind: SpanKind.CLIENT,
    });
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
