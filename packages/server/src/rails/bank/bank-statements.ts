// What the bank says back (docs/payouts.md, Reading the bank's files): pain.002 payment status reports and
// camt.053 statements / camt.054 debit-credit notifications, any version, read for what concerns our
// payouts. A debit booked for a payout (one entry per payout, or one batch entry whose details list them,
// or a batch entry naming our message) pays it; a rejection fails it; a credit that returns a payout,
// with its reason code, returns it. Lines that are not about ours (the operator's account statement
// carries all its other traffic: no payout id as EndToEndId, no payment file of ours as MsgId) are counted
// and passed over. A file that is not one of these, or lacks what it must have, is refused whole with the
// reason.
import { XMLParser } from 'fast-xml-parser';
import { idPrefix } from '../../platform/ids.ts';

export type BankNews =
  | { kind: 'paid'; endToEndId: string; amount: string; currency: string; bookingDate: string | null }
  | { kind: 'paid_batch'; messageId: string; amount: string; currency: string; bookingDate: string | null }
  | { kind: 'failed'; endToEndId: string; reasonCode: string }
  | { kind: 'failed_message'; messageId: string; reasonCode: string }
  | { kind: 'returned'; endToEndId: string; amount: string; currency: string; reasonCode: string };

export interface BankFile {
  kind: 'pain.002' | 'camt.053' | 'camt.054';
  messageId: string;
  news: BankNews[];
  /** Entries of ours that say nothing we act on (pending, informational), counted for the report */
  ignored: number;
}

export class BankFileError extends Error {}

type Node = Record<string, unknown>;

const isOurPayout = (reference: string) => reference.startsWith(idPrefix('payout'));
const isOurFile = (messageId: string) => messageId.startsWith(idPrefix('bankFile'));

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  parseTagValue: false,
  isArray: (name) =>
    [
      'Stmt',
      'Ntfctn',
      'Ntry',
      'NtryDtls',
      'TxDtls',
      'OrgnlPmtInfAndSts',
      'TxInfAndSts',
      'StsRsnInf',
    ].includes(name),
  // No entity expansion: a statement never needs one, and a DOCTYPE of nested entities could blow up.
  processEntities: false,
});

export function readBankFile(text: string): BankFile {
  let doc: Node;
  try {
    doc = parser.parse(text, true) as Node;
  } catch (err) {
    throw new BankFileError(`not well-formed XML: ${(err as Error).message}`);
  }
  // The parser drops namespaces (banks use a default namespace or a prefix): read it off the start tag.
  const start = /<(?:[\w.-]+:)?Document\b[^>]*>/.exec(text)?.[0] ?? '';
  const namespace = /urn:iso:std:iso:20022:tech:xsd:[\w.]+/.exec(start)?.[0] ?? '';
  const kind = /:(pain\.002|camt\.053|camt\.054)\.\d{3}\.\d{2}$/.exec(namespace)?.[1] as
    | BankFile['kind']
    | undefined;
  if (!kind)
    throw new BankFileError(`not a pain.002, camt.053 or camt.054 message (namespace "${namespace}")`);
  const document = doc.Document as Node | undefined;
  if (!document || typeof document !== 'object') throw new BankFileError('no ISO 20022 Document element');
  if (kind === 'pain.002') return readStatusReport(need(document, 'CstmrPmtStsRpt'));
  const root = need(document, kind === 'camt.053' ? 'BkToCstmrStmt' : 'BkToCstmrDbtCdtNtfctn');
  const reports = (root[kind === 'camt.053' ? 'Stmt' : 'Ntfctn'] as Node[] | undefined) ?? [];
  if (reports.length === 0)
    throw new BankFileError(`${kind} without ${kind === 'camt.053' ? 'Stmt' : 'Ntfctn'}`);
  const file: BankFile = { kind, messageId: text1(need(root, 'GrpHdr'), 'MsgId'), news: [], ignored: 0 };
  for (const report of reports) {
    for (const entry of (report.Ntry as Node[] | undefined) ?? []) readEntry(entry, file);
  }
  return file;
}

function readStatusReport(report: Node): BankFile {
  const file: BankFile = {
    kind: 'pain.002',
    messageId: text1(need(report, 'GrpHdr'), 'MsgId'),
    news: [],
    ignored: 0,
  };
  const group = need(report, 'OrgnlGrpInfAndSts');
  const originalMessage = text1(group, 'OrgnlMsgId');
  if (!isOurFile(originalMessage)) {
    file.ignored++;
    return file;
  }
  if (group.GrpSts === 'RJCT') {
    file.news.push({ kind: 'failed_message', messageId: originalMessage, reasonCode: reasonOf(group) });
    return file;
  }
  for (const block of (report.OrgnlPmtInfAndSts as Node[] | undefined) ?? []) {
    if (block.PmtInfSts === 'RJCT' && !block.TxInfAndSts) {
      file.news.push({ kind: 'failed_message', messageId: originalMessage, reasonCode: reasonOf(block) });
      continue;
    }
    for (const tx of (block.TxInfAndSts as Node[] | undefined) ?? []) {
      const endToEndId = text1(tx, 'OrgnlEndToEndId');
      if (tx.TxSts === 'RJCT' && isOurPayout(endToEndId)) {
        file.news.push({ kind: 'failed', endToEndId, reasonCode: reasonOf(tx) });
      } else file.ignored++;
    }
  }
  return file;
}

function readEntry(entry: Node, file: BankFile): void {
  const status = typeof entry.Sts === 'object' ? (entry.Sts as Node).Cd : entry.Sts;
  if (status !== 'BOOK') {
    file.ignored++;
    return;
  }
  const direction = text1(entry, 'CdtDbtInd');
  const entryAmount = amountOf(entry.Amt);
  const bookingDate = dateOf(entry.BookgDt);
  const details = ((entry.NtryDtls as Node[] | undefined) ?? []).flatMap(
    (d) => (d.TxDtls as Node[] | undefined) ?? [],
  );
  const batch = ((entry.NtryDtls as Node[] | undefined) ?? [])
    .map((d) => d.Btch as Node | undefined)
    .find((b) => b?.MsgId);
  if (details.length === 0 && batch && direction === 'DBIT') {
    const messageId = String(batch.MsgId);
    if (isOurFile(messageId)) file.news.push({ kind: 'paid_batch', messageId, ...entryAmount, bookingDate });
    else file.ignored++;
    return;
  }
  for (const tx of details) {
    const endToEndId = (tx.Refs as Node | undefined)?.EndToEndId;
    const returned = tx.RtrInf as Node | undefined;
    const amount = tx.Amt !== undefined ? amountOf(tx.Amt) : entryAmount;
    const reference = returned
      ? String(
          (tx.Refs as Node | undefined)?.EndToEndId ?? (returned.OrgnlEndToEndId as string | undefined) ?? '',
        )
      : String(endToEndId ?? '');
    if (!isOurPayout(reference)) {
      file.ignored++;
      continue;
    }
    if (returned || direction === 'CRDT') {
      const reason = returned ? (returned.Rsn as Node | undefined)?.Cd : undefined;
      file.news.push({
        kind: 'returned',
        endToEndId: reference,
        ...amount,
        reasonCode: String(reason ?? 'NARR'),
      });
    } else {
      file.news.push({ kind: 'paid', endToEndId: reference, ...amount, bookingDate });
    }
  }
}

function need(node: Node, name: string): Node {
  const child = node[name];
  if (!child || typeof child !== 'object') throw new BankFileError(`missing ${name}`);
  return child as Node;
}

function text1(node: Node, name: string): string {
  const value = node[name];
  if (typeof value !== 'string' || value.trim() === '') throw new BankFileError(`missing ${name}`);
  return value.trim();
}

function amountOf(amt: unknown): { amount: string; currency: string } {
  // <Amt Ccy="EUR">1.00</Amt>, or inside TxDtls <Amt> / <AmtDtls><TxAmt><Amt>
  const node = (typeof amt === 'object' && amt && 'Amt' in (amt as Node) ? (amt as Node).Amt : amt) as
    | Node
    | string
    | undefined;
  if (
    !node ||
    typeof node !== 'object' ||
    typeof node['#text'] !== 'string' ||
    typeof node['@Ccy'] !== 'string'
  ) {
    throw new BankFileError('an entry without an amount and currency (Amt Ccy="…")');
  }
  return { amount: node['#text'].trim(), currency: node['@Ccy'] };
}

function dateOf(node: unknown): string | null {
  if (!node || typeof node !== 'object') return null;
  const value = (node as Node).Dt ?? (node as Node).DtTm;
  return typeof value === 'string' ? value.slice(0, 10) : null;
}

function reasonOf(node: Node): string {
  const info = (node.StsRsnInf as Node[] | undefined)?.[0];
  const code = (info?.Rsn as Node | undefined)?.Cd;
  return typeof code === 'string' ? code : 'NARR';
}
