// Console › Payments › Disputes: the merchant's chargebacks with their deadline, the answer (evidence files
// uploaded as a form, and text) or the acceptance of the loss, and the outcome. Actions call the disputes
// service the payments API calls, with the merchant's scope, so the checks, the storage and the money are
// the same.

import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { contextOf, sendConsolePage } from '../../platform/console/console-http.ts';
import {
  details,
  doneNotice,
  link,
  listView,
  notice,
  objectHead,
} from '../../platform/console/console-layout.ts';
import { h } from '../../platform/console/html-template.ts';
import { disputeReasonLabel } from '../../platform/console/labels.ts';
import { confirmedAction, listRoute, textQuery, viewerOf } from '../../platform/console/route-kit.ts';
import { money, objectLink, status, statusFact, when } from '../../platform/console/values.ts';
import type { DomainError } from '../../platform/errors/domain-error.ts';
import { asDomainError } from '../../platform/http/as-domain-error.ts';
import {
  checkedEvidenceFile,
  EVIDENCE_TEXT_FIELDS,
  type EvidenceFile,
  MAX_EVIDENCE_BYTES,
  MAX_EVIDENCE_FILES,
  MAX_EVIDENCE_TEXT,
} from '../disputes/evidence.ts';
import { loadMerchantScope } from '../sites.ts';
import type { PaymentsConsoleDeps } from './console-deps.ts';
import { DISPUTE_STATUSES, getDispute, listDisputes } from './payments-reads.ts';

type IdParams = { id: string };

const FIELD_LABELS: Record<(typeof EVIDENCE_TEXT_FIELDS)[number], string> = {
  productDescription: 'What was sold',
  customerCommunication: 'Communication with the customer',
  shippingCarrier: 'Shipping carrier',
  shippingTrackingNumber: 'Tracking number',
  refundPolicy: 'Refund policy',
  uncategorizedText: 'Anything else',
};

export async function registerDisputesConsoleRoutes(
  app: FastifyInstance,
  deps: PaymentsConsoleDeps,
): Promise<void> {
  const { db } = deps.services;
  const disputes = deps.services.payments.disputes;

  listRoute(app, deps, '/payments/disputes', {
    title: 'Disputes',
    read: listDisputes,
    amounts: true,
    filters: [
      { name: 'status', label: 'Status', options: DISPUTE_STATUSES, labels: 'payments.dispute' },
      { name: 'transactionId', label: 'Payment (transaction id)' },
    ],
    table: (rows, next) =>
      listView({
        caption: 'Chargebacks, newest first',
        rows,
        columns: [
          {
            label: 'Dispute',
            cell: (d) => objectLink('dispute', `/console/payments/disputes/${d.id}`, d.id),
          },
          { label: 'Opened', cell: (d) => when(d.created_at) },
          {
            label: 'Payment',
            cell: (d) =>
              objectLink(
                'transaction',
                `/console/payments/transactions/${d.transaction_id}`,
                d.transaction_id,
              ),
          },
          { label: 'Status', cell: (d) => status(d.status, 'payments.dispute') },
          { label: 'Reason', cell: (d) => disputeReasonLabel(d.network, d.reason_code) },
          { label: 'Amount', cell: (d) => money(d.amount, d.currency) },
          {
            label: 'Answer by',
            cell: (d) => (d.status === 'needs_response' ? when(d.evidence_due_at) : '—'),
          },
        ],
        nextHref: next,
      }),
  });

  const showDispute = async (request: FastifyRequest, reply: FastifyReply, error?: DomainError) => {
    const viewer = viewerOf(request, deps);
    const d = await getDispute(db, viewer, (request.params as IdParams).id);
    const files = await disputes.evidenceOf(d.id);
    const base = `/console/payments/disputes/${d.id}`;
    const answerable = d.status === 'needs_response' && d.evidence_due_at > deps.services.clock.now();
    const ctx = contextOf(request, deps);
    const form = answerable
      ? h`<h2 id="answer">Answer with evidence</h2>
<p>Up to ${MAX_EVIDENCE_FILES} files, each a PDF, PNG or JPEG of at most ${MAX_EVIDENCE_BYTES / 1024 / 1024} MB, and what you can tell. The network decides within 5 days of your answer.</p>
<form method="post" action="${base}/evidence" enctype="multipart/form-data" class="action">
<input type="hidden" name="csrf" value="${ctx.csrfToken}">
${error ? notice(error.message, 'error') : ''}
<label for="field-files">Files</label><input id="field-files" name="files" type="file" multiple accept="application/pdf,image/png,image/jpeg"${error?.field === 'files' ? h` aria-invalid="true"` : ''}>
${EVIDENCE_TEXT_FIELDS.map((name) => h`<label for="field-${name}">${FIELD_LABELS[name]}</label><textarea id="field-${name}" name="${name}" rows="2" maxlength="${MAX_EVIDENCE_TEXT}"></textarea>`)}
<button type="submit">Send the evidence</button>
</form>
<p>${link(`${base}/accept`, 'Accept the chargeback…')}</p>`
      : '';
    return sendConsolePage(
      request,
      reply,
      deps,
      { tab: `Dispute ${d.id}`, heading: `Dispute — ${disputeReasonLabel(d.network, d.reason_code)}` },
      h`${doneNotice(textQuery(request).done)}
${objectHead(viewer, {
  amount: money(d.amount, d.currency),
  status: status(d.status, 'payments.dispute'),
  id: String(d.id),
  actions: answerable
    ? [
        { href: '#answer', label: 'Answer with evidence', route: '/payments/disputes/:id/accept' },
        { href: `${base}/accept`, label: 'Accept the chargeback…', route: '/payments/disputes/:id/accept' },
      ]
    : [],
})}
${details([
  ['Status', statusFact(d.status, 'payments.dispute')],
  [
    'Payment',
    objectLink('transaction', `/console/payments/transactions/${d.transaction_id}`, d.transaction_id),
  ],
  [
    'Chargeback',
    objectLink(
      'transaction',
      `/console/payments/transactions/${d.chargeback_transaction_id}`,
      d.chargeback_transaction_id,
    ),
  ],
  [
    'Representment',
    d.representment_transaction_id
      ? objectLink(
          'transaction',
          `/console/payments/transactions/${d.representment_transaction_id}`,
          d.representment_transaction_id,
        )
      : null,
  ],
  ['Reason', disputeReasonLabel(d.network, d.reason_code)],
  ['Amount', money(d.amount, d.currency)],
  ['Dispute fee', money(d.fee, d.currency)],
  [
    'Not covered by the balance',
    BigInt(d.uncovered_amount) > 0n ? money(d.uncovered_amount, d.currency) : null,
  ],
  ['Answer by', when(d.evidence_due_at)],
  ['Decided by', when(d.decide_at)],
  ['Decided', when(d.decided_at)],
  ['Opened', when(d.created_at)],
])}
<h2>Evidence</h2>
${
  files.length || d.evidence_text
    ? h`${details(Object.entries(d.evidence_text ?? {}).map(([name, value]) => [FIELD_LABELS[name as keyof typeof FIELD_LABELS] ?? name, value]))}
${listView({
  caption: 'Files (stored encrypted)',
  rows: files,
  columns: [
    { label: 'File', cell: (f) => f.filename },
    { label: 'Type', cell: (f) => f.content_type },
    { label: 'Size', cell: (f) => `${f.bytes} bytes` },
    { label: 'Sent', cell: (f) => when(f.created_at) },
  ],
})}`
    : h`<p>None sent.</p>`
}
${form}`,
      error ? error.status : 200,
    );
  };

  app.get<{ Params: IdParams }>('/payments/disputes/:id', (request, reply) => showDispute(request, reply));

  const accept = confirmedAction<IdParams>(
    deps,
    async (request, params) => {
      const d = await getDispute(db, viewerOf(request, deps), params.id);
      return {
        title: `Accept dispute ${d.id}`,
        explain: h`<p>The ${money(d.amount, d.currency)} the network took back stays with the cardholder, and the dispute ends. This cannot be undone.</p>`,
        fields: [],
        submit: 'Accept the chargeback',
        danger: true,
      };
    },
    async (request, params) => {
      const d = await getDispute(db, viewerOf(request, deps), params.id);
      await disputes.accept(await loadMerchantScope(db, d.merchant_id), d.id);
      return `/console/payments/disputes/${d.id}?done=accepted`;
    },
  );
  app.get('/payments/disputes/:id/accept', accept.get);
  app.post('/payments/disputes/:id/accept', accept.post);

  // The upload is read whole before the CSRF check (attachFieldsToBody): its fields read as a form's.
  await app.register(async (scoped) => {
    await scoped.register(multipart, {
      attachFieldsToBody: true,
      limits: {
        fileSize: MAX_EVIDENCE_BYTES,
        files: MAX_EVIDENCE_FILES,
        fields: 20,
        fieldSize: MAX_EVIDENCE_TEXT,
      },
      throwFileSizeLimit: false,
    });
    scoped.post<{ Params: IdParams }>('/payments/disputes/:id/evidence', async (request, reply) => {
      const d = await getDispute(db, viewerOf(request, deps), request.params.id);
      try {
        const { files, text } = await evidenceOf(request.body as Record<string, unknown>);
        await disputes.submitEvidence(await loadMerchantScope(db, d.merchant_id), d.id, { files, text });
      } catch (err) {
        const error = asDomainError(err);
        if (error.status >= 500 || error.status === 404) throw err;
        return showDispute(request, reply, error);
      }
      return reply.code(303).header('location', `/console/payments/disputes/${d.id}?done=answered`).send();
    });
  });
}

/** The files and text of the console's evidence form, checked as the API checks them. */
async function evidenceOf(
  body: Record<string, unknown>,
): Promise<{ files: EvidenceFile[]; text: Record<string, string> }> {
  const files: EvidenceFile[] = [];
  const text: Record<string, string> = {};
  for (const [name, entry] of Object.entries(body)) {
    for (const part of (Array.isArray(entry) ? entry : [entry]) as {
      type: string;
      value?: unknown;
      filename?: string;
      file?: { truncated: boolean };
      toBuffer?: () => Promise<Buffer>;
    }[]) {
      if (part.type === 'file' && part.toBuffer) {
        const bytes = await part.toBuffer();
        if (bytes.length === 0 && !part.filename) continue; // the form was sent without choosing a file
        files.push(
          checkedEvidenceFile(
            { field: name, filename: part.filename || name, bytes, truncated: part.file?.truncated ?? false },
            'files',
          ),
        );
      } else if ((EVIDENCE_TEXT_FIELDS as readonly string[]).includes(name)) {
        const value = String(part.value ?? '').trim();
        if (value) text[name] = value;
      }
    }
  }
  return { files, text };
}
