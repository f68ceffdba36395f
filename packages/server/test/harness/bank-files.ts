// What a bank sends back, shaped as banks send it (test fixtures for docs/payouts.md, Reading the bank's
// files): a camt.054 debit notification booking a payment file as one batch entry with a line per credit
// transfer, a camt.053 end-of-day statement with a returned credit transfer (its reason code in RtrInf),
// and a pain.002 status report rejecting transfers. Every camt.053 built here validates against the
// official camt.053.001.08 XSD (test/fixtures/iso20022). `xmllint` validates files against an XSD.
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';

export const XSD_DIR = join(import.meta.dirname, '..', 'fixtures', 'iso20022');

/** xmllint's verdict on a file against an XSD (in XSD_DIR, or a path): '' when it validates, else its complaints. */
export function xsdProblems(file: string, xsd: string): string {
  try {
    execFileSync('xmllint', ['--noout', '--schema', resolve(XSD_DIR, xsd), file], { stdio: 'pipe' });
    return '';
  } catch (err) {
    return String((err as { stderr?: Buffer }).stderr ?? err);
  }
}

export interface BookedTransfer {
  endToEndId: string;
  amount: string;
  creditorName: string;
  creditorIban: string;
}

const ACCOUNT = 'DE89370400440532013000';

/** A camt.054 that books the whole payment file (its MsgId) as one debit, itemized per transfer. */
export function camt054Booking(input: {
  messageId: string;
  paymentFileId: string;
  bookingDate: string;
  currency: string;
  transfers: BookedTransfer[];
}): string {
  const total = sum(input.transfers.map((t) => t.amount));
  const lines = input.transfers
    .map(
      (t) => `            <TxDtls>
              <Refs><MsgId>${input.paymentFileId}</MsgId><PmtInfId>${input.paymentFileId}</PmtInfId><EndToEndId>${t.endToEndId}</EndToEndId></Refs>
              <Amt Ccy="${input.currency}">${t.amount}</Amt>
              <CdtDbtInd>DBIT</CdtDbtInd>
              <RltdPties><Cdtr><Pty><Nm>${t.creditorName}</Nm></Pty></Cdtr><CdtrAcct><Id><IBAN>${t.creditorIban}</IBAN></Id></CdtrAcct></RltdPties>
            </TxDtls>
`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <BkToCstmrDbtCdtNtfctn>
    <GrpHdr><MsgId>${input.messageId}</MsgId><CreDtTm>${input.bookingDate}T18:00:00+01:00</CreDtTm></GrpHdr>
    <Ntfctn>
      <Id>${input.messageId}-1</Id>
      <CreDtTm>${input.bookingDate}T18:00:00+01:00</CreDtTm>
      <Acct><Id><IBAN>${ACCOUNT}</IBAN></Id><Ccy>${input.currency}</Ccy></Acct>
      <Ntry>
        <Amt Ccy="${input.currency}">${total}</Amt>
        <CdtDbtInd>DBIT</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BookgDt><Dt>${input.bookingDate}</Dt></BookgDt>
        <ValDt><Dt>${input.bookingDate}</Dt></ValDt>
        <AcctSvcrRef>BANKREF-${input.messageId}</AcctSvcrRef>
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>ICDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls>
          <Btch><MsgId>${input.paymentFileId}</MsgId><PmtInfId>${input.paymentFileId}</PmtInfId><NbOfTxs>${input.transfers.length}</NbOfTxs></Btch>
${lines}        </NtryDtls>
      </Ntry>
    </Ntfctn>
  </BkToCstmrDbtCdtNtfctn>
</Document>
`;
}

/** A camt.053 end-of-day statement whose one entry is a credit transfer returned to us (RtrInf). */
export function camt053Return(input: {
  messageId: string;
  bookingDate: string;
  currency: string;
  returned: BookedTransfer & { reasonCode: string };
  openingBalance?: string;
}): string {
  const r = input.returned;
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>${input.messageId}</MsgId><CreDtTm>${input.bookingDate}T23:00:00+01:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>${input.messageId}-1</Id>
      <ElctrncSeqNb>1</ElctrncSeqNb>
      <CreDtTm>${input.bookingDate}T23:00:00+01:00</CreDtTm>
      <Acct><Id><IBAN>${ACCOUNT}</IBAN></Id><Ccy>${input.currency}</Ccy></Acct>
      <Bal>
        <Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp>
        <Amt Ccy="${input.currency}">${input.openingBalance ?? '100000.00'}</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Dt><Dt>${input.bookingDate}</Dt></Dt>
      </Bal>
      <Ntry>
        <Amt Ccy="${input.currency}">${r.amount}</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BookgDt><Dt>${input.bookingDate}</Dt></BookgDt>
        <ValDt><Dt>${input.bookingDate}</Dt></ValDt>
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>ICDT</Cd><SubFmlyCd>RRTN</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls>
          <TxDtls>
            <Refs><EndToEndId>${r.endToEndId}</EndToEndId></Refs>
            <Amt Ccy="${input.currency}">${r.amount}</Amt>
            <CdtDbtInd>CRDT</CdtDbtInd>
            <RltdPties><Dbtr><Pty><Nm>${r.creditorName}</Nm></Pty></Dbtr><DbtrAcct><Id><IBAN>${r.creditorIban}</IBAN></Id></DbtrAcct></RltdPties>
            <RtrInf><Rsn><Cd>${r.reasonCode}</Cd></Rsn><AddtlInf>Account closed</AddtlInf></RtrInf>
          </TxDtls>
        </NtryDtls>
      </Ntry>
    </Stmt>
  </BkToCstmrStmt>
</Document>
`;
}

/** A pain.002 that rejects some transfers of a payment file. */
export function pain002Rejection(input: {
  messageId: string;
  paymentFileId: string;
  rejected: { endToEndId: string; reasonCode: string }[];
}): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10">
  <CstmrPmtStsRpt>
    <GrpHdr><MsgId>${input.messageId}</MsgId><CreDtTm>2026-01-01T10:00:00Z</CreDtTm></GrpHdr>
    <OrgnlGrpInfAndSts><OrgnlMsgId>${input.paymentFileId}</OrgnlMsgId><OrgnlMsgNmId>pain.001.001.09</OrgnlMsgNmId><GrpSts>PART</GrpSts></OrgnlGrpInfAndSts>
    <OrgnlPmtInfAndSts>
      <OrgnlPmtInfId>${input.paymentFileId}</OrgnlPmtInfId>
      <PmtInfSts>PART</PmtInfSts>
${input.rejected
  .map(
    (r) => `      <TxInfAndSts>
        <OrgnlEndToEndId>${r.endToEndId}</OrgnlEndToEndId>
        <TxSts>RJCT</TxSts>
        <StsRsnInf><Rsn><Cd>${r.reasonCode}</Cd></Rsn></StsRsnInf>
      </TxInfAndSts>
`,
  )
  .join('')}    </OrgnlPmtInfAndSts>
  </CstmrPmtStsRpt>
</Document>
`;
}

function sum(amounts: string[]): string {
  const cents = amounts.reduce((total, a) => total + BigInt(a.replace('.', '')), 0n);
  const text = cents.toString().padStart(3, '0');
  return `${text.slice(0, -2)}.${text.slice(-2)}`;
}
