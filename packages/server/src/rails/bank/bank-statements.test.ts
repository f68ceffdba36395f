// Reading what the bank says back (docs/payouts.md, Bank files): a day's camt.053 of the operator's account
// carries all its traffic, so only lines about our payouts and files become news; a namespace prefix, a
// pain.002 of another system's file, and files that are not ISO 20022 at all.
import { describe, expect, it } from 'vitest';
import { BankFileError, readBankFile } from './bank-statements.ts';

const entry = (body: string, status = 'BOOK') =>
  `<Ntry><Amt Ccy="EUR">${/<Amt Ccy="EUR">([\d.]+)</.exec(body)?.[1] ?? '1.00'}</Amt>${body.includes('CRDT') ? '<CdtDbtInd>CRDT</CdtDbtInd>' : '<CdtDbtInd>DBIT</CdtDbtInd>'}<Sts><Cd>${status}</Cd></Sts><BookgDt><Dt>2026-11-27</Dt></BookgDt><BkTxCd/>${body}</Ntry>`;

describe('readBankFile', () => {
  it('reads a camt.053 day of mixed traffic: our payouts booked and returned, everything else passed over', () => {
    const statement = `<?xml version="1.0" encoding="UTF-8"?>
<s:Document xmlns:s="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><s:BkToCstmrStmt>
<s:GrpHdr><s:MsgId>STMT-1</s:MsgId></s:GrpHdr><s:Stmt><s:Id>1</s:Id>
${[
  // a card scheme's settlement credited to the operator: not ours
  `<NtryDtls><TxDtls><Refs><EndToEndId>VISA-SETTLE-20261127</EndToEndId></Refs><Amt Ccy="EUR">1500.00</Amt><CdtDbtInd>CRDT</CdtDbtInd></TxDtls></NtryDtls>`,
  // our file booked as one batch, itemized
  `<NtryDtls><Btch><MsgId>bkf_01ABC</MsgId><NbOfTxs>2</NbOfTxs></Btch><TxDtls><Refs><EndToEndId>po_01A</EndToEndId></Refs><Amt Ccy="EUR">10.00</Amt></TxDtls><TxDtls><Refs><EndToEndId>po_01B</EndToEndId></Refs><Amt Ccy="EUR">20.50</Amt></TxDtls></NtryDtls>`,
  // another run of the operator's (salaries): not ours
  `<NtryDtls><Btch><MsgId>SALARY-NOV</MsgId></Btch></NtryDtls>`,
  // a payout returned, its reason code in RtrInf
  `<NtryDtls><TxDtls><Refs><EndToEndId>po_01B</EndToEndId></Refs><Amt Ccy="EUR">20.50</Amt><CdtDbtInd>CRDT</CdtDbtInd><RtrInf><Rsn><Cd>MD07</Cd></Rsn></RtrInf></TxDtls></NtryDtls>`,
]
  .map((body) => entry(body).replace(/<(\/?)(\w)/g, '<$1s:$2'))
  .join('\n')}
${entry('<NtryDtls><TxDtls><Refs><EndToEndId>po_01C</EndToEndId></Refs></TxDtls></NtryDtls>', 'PDNG').replace(/<(\/?)(\w)/g, '<$1s:$2')}
</s:Stmt></s:BkToCstmrStmt></s:Document>`;
    const file = readBankFile(statement);
    expect(file).toMatchObject({ kind: 'camt.053', messageId: 'STMT-1', ignored: 3 });
    expect(file.news).toEqual([
      { kind: 'paid', endToEndId: 'po_01A', amount: '10.00', currency: 'EUR', bookingDate: '2026-11-27' },
      { kind: 'paid', endToEndId: 'po_01B', amount: '20.50', currency: 'EUR', bookingDate: '2026-11-27' },
      { kind: 'returned', endToEndId: 'po_01B', amount: '20.50', currency: 'EUR', reasonCode: 'MD07' },
    ]);
  });

  it('reads a pain.002 of our file, and passes over one about another system’s file', () => {
    const report = (
      original: string,
    ) => `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10"><CstmrPmtStsRpt>
<GrpHdr><MsgId>ST-1</MsgId></GrpHdr><OrgnlGrpInfAndSts><OrgnlMsgId>${original}</OrgnlMsgId><GrpSts>PART</GrpSts></OrgnlGrpInfAndSts>
<OrgnlPmtInfAndSts><TxInfAndSts><OrgnlEndToEndId>po_01A</OrgnlEndToEndId><TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AC01</Cd></Rsn></StsRsnInf></TxInfAndSts>
<TxInfAndSts><OrgnlEndToEndId>po_01B</OrgnlEndToEndId><TxSts>ACSC</TxSts></TxInfAndSts></OrgnlPmtInfAndSts></CstmrPmtStsRpt></Document>`;
    expect(readBankFile(report('bkf_01ABC'))).toMatchObject({
      kind: 'pain.002',
      news: [{ kind: 'failed', endToEndId: 'po_01A', reasonCode: 'AC01' }],
      ignored: 1,
    });
    expect(readBankFile(report('ERP-RUN-7'))).toMatchObject({ news: [], ignored: 1 });
  });

  it('refuses what is not a statement or status report, or lacks what it must have, saying why', () => {
    for (const [text, reason] of [
      ['not xml at all <', /not well-formed|ISO 20022/],
      [
        '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"/>',
        /not a pain\.002, camt\.053 or camt\.054/,
      ],
      [
        '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn><GrpHdr/></BkToCstmrDbtCdtNtfctn></Document>',
        /Ntfctn|MsgId/,
      ],
      [
        '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn><GrpHdr><MsgId>N</MsgId></GrpHdr><Ntfctn><Ntry><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts></Ntry></Ntfctn></BkToCstmrDbtCdtNtfctn></Document>',
        /amount/,
      ],
      // an entity bomb is not expanded: the file is read as it stands and refused for what it lacks
      [
        '<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn><GrpHdr><MsgId>&b;</MsgId></GrpHdr></BkToCstmrDbtCdtNtfctn></Document>',
        /Ntfctn/,
      ],
    ] as const) {
      expect(() => readBankFile(text), text.slice(0, 40)).toThrow(BankFileError);
      expect(() => readBankFile(text)).toThrow(reason);
    }
  });
});
