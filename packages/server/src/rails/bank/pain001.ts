// The pain.001.001.09 customer credit transfer initiation a payout run hands the bank (docs/payouts.md,
// Bank files): one message per currency, one payment information block, one credit transfer per payout
// whose EndToEndId is the payout id. Written to the European Payments Council's SEPA credit transfer
// profile (EPC132-08, whose XSD the tests validate every file against): SEPA service level, SLEV
// charges, IBANs only, the debtor's BIC or NOTPROVIDED. The same input always gives the same bytes, so
// a file rewritten after a crash is the file that was lost.
import { formatAmountIn } from '../../platform/money/amount.ts';

export interface CreditTransfer {
  endToEndId: string;
  /** Minor units */
  amount: bigint;
  creditorName: string;
  creditorIban: string;
  creditorBic: string | null;
  remittance: string;
}

export interface CreditTransferMessage {
  messageId: string;
  createdAt: Date;
  /** The day the bank is asked to execute it (YYYY-MM-DD) */
  executionDate: string;
  currency: string;
  debtor: { name: string; iban: string; bic: string | undefined };
  transfers: CreditTransfer[];
}

export function writePain001(m: CreditTransferMessage): string {
  const total = m.transfers.reduce((sum, t) => sum + t.amount, 0n);
  const amount = (minor: bigint) => formatAmountIn(minor, m.currency);
  const debtorAgent = m.debtor.bic ? `<BICFI>${m.debtor.bic}</BICFI>` : '<Othr><Id>NOTPROVIDED</Id></Othr>';
  const transfers = m.transfers.map(
    (t) => `      <CdtTrfTxInf>
        <PmtId><EndToEndId>${xml(t.endToEndId)}</EndToEndId></PmtId>
        <Amt><InstdAmt Ccy="${m.currency}">${amount(t.amount)}</InstdAmt></Amt>
${t.creditorBic ? `        <CdtrAgt><FinInstnId><BICFI>${t.creditorBic}</BICFI></FinInstnId></CdtrAgt>\n` : ''}        <Cdtr><Nm>${xml(t.creditorName)}</Nm></Cdtr>
        <CdtrAcct><Id><IBAN>${t.creditorIban}</IBAN></Id></CdtrAcct>
        <RmtInf><Ustrd>${xml(t.remittance.slice(0, 140))}</Ustrd></RmtInf>
      </CdtTrfTxInf>
`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09">
  <CstmrCdtTrfInitn>
    <GrpHdr>
      <MsgId>${xml(m.messageId)}</MsgId>
      <CreDtTm>${m.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z')}</CreDtTm>
      <NbOfTxs>${m.transfers.length}</NbOfTxs>
      <CtrlSum>${amount(total)}</CtrlSum>
      <InitgPty><Nm>${xml(m.debtor.name)}</Nm></InitgPty>
    </GrpHdr>
    <PmtInf>
      <PmtInfId>${xml(m.messageId)}</PmtInfId>
      <PmtMtd>TRF</PmtMtd>
      <BtchBookg>true</BtchBookg>
      <NbOfTxs>${m.transfers.length}</NbOfTxs>
      <CtrlSum>${amount(total)}</CtrlSum>
      <PmtTpInf><SvcLvl><Cd>SEPA</Cd></SvcLvl></PmtTpInf>
      <ReqdExctnDt><Dt>${m.executionDate}</Dt></ReqdExctnDt>
      <Dbtr><Nm>${xml(m.debtor.name)}</Nm></Dbtr>
      <DbtrAcct><Id><IBAN>${m.debtor.iban}</IBAN></Id></DbtrAcct>
      <DbtrAgt><FinInstnId>${debtorAgent}</FinInstnId></DbtrAgt>
      <ChrgBr>SLEV</ChrgBr>
${transfers.join('')}    </PmtInf>
  </CstmrCdtTrfInitn>
</Document>
`;
}

/** Text as XML character data; characters outside what SEPA allows pass unchanged (banks transliterate). */
function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
