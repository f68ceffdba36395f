// The sandbox's lever for the bank booking a payout (docs/payouts.md, The bank rail): the route
// `POST /sandbox/bank/payouts/{id}/pay`, `tessera trigger … payout.paid` and the console. A payout the
// simulator sent is paid at once; one sent in a bank file is booked the way the bank books it: a camt.054
// debit notification naming the payout is written into the inbox and read by the rail's own reading path,
// so the sandbox proves what production runs.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import type { PayoutLifecycle } from '../../platform/payouts/payout-lifecycle.ts';

export interface SandboxBookingDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  lifecycle: PayoutLifecycle;
  inboxDir: string;
  /** The operator's account the notification is about */
  debtorIban: string;
  /** Reads the inbox now (the rail's collect) */
  collect: () => Promise<number>;
}

export async function bookPayout(deps: SandboxBookingDeps, payoutId: string): Promise<void> {
  const payout = await deps.db
    .selectFrom('payouts')
    .select(['id', 'status', 'amount', 'currency', 'bank_file_id'])
    .where('id', '=', payoutId)
    .executeTakeFirst();
  if (!payout) throw new DomainError('not_found', 'payout not found');
  if (payout.status === 'paid') return;
  if (payout.bank_file_id === null || payout.status !== 'in_transit') {
    await deps.transact((tx) => deps.lifecycle.step(tx, payoutId, 'paid'));
    return;
  }
  const day = deps.clock.now().toISOString().slice(0, 10);
  const amount = formatAmountIn(BigInt(payout.amount), payout.currency);
  await mkdir(deps.inboxDir, { recursive: true });
  await writeFile(
    join(deps.inboxDir, `sandbox-camt054-${payout.id}.xml`),
    camt054Booking({
      messageId: `SBX-${payout.id}`.slice(0, 35),
      account: deps.debtorIban,
      day,
      amount,
      currency: payout.currency,
      endToEndId: payout.id,
    }),
  );
  await deps.collect();
}

/** A camt.054.001.08 debit notification with one booked entry: the transfer whose EndToEndId is the payout. */
function camt054Booking(input: {
  messageId: string;
  account: string;
  day: string;
  amount: string;
  currency: string;
  endToEndId: string;
}): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">
  <BkToCstmrDbtCdtNtfctn>
    <GrpHdr><MsgId>${input.messageId}</MsgId><CreDtTm>${input.day}T12:00:00Z</CreDtTm></GrpHdr>
    <Ntfctn>
      <Id>${input.messageId}</Id>
      <CreDtTm>${input.day}T12:00:00Z</CreDtTm>
      <Acct><Id><IBAN>${input.account}</IBAN></Id><Ccy>${input.currency}</Ccy></Acct>
      <Ntry>
        <Amt Ccy="${input.currency}">${input.amount}</Amt>
        <CdtDbtInd>DBIT</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BookgDt><Dt>${input.day}</Dt></BookgDt>
        <ValDt><Dt>${input.day}</Dt></ValDt>
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>ICDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls>
          <TxDtls>
            <Refs><EndToEndId>${input.endToEndId}</EndToEndId></Refs>
            <Amt Ccy="${input.currency}">${input.amount}</Amt>
            <CdtDbtInd>DBIT</CdtDbtInd>
          </TxDtls>
        </NtryDtls>
      </Ntry>
    </Ntfctn>
  </BkToCstmrDbtCdtNtfctn>
</Document>
`;
}
