// /dispute (docs/payments.md, Disputes; a Tessera extension in the xMoney envelope): the merchant's
// chargebacks, its answer with evidence (multipart: PDF, PNG or JPEG files, sniffed, at most 5 MB each,
// stored encrypted, and text fields) or its acceptance of the loss.
import multipart from '@fastify/multipart';
import { z } from 'zod';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { readUploads } from '../../platform/http/uploaded-files.ts';
import type { DisputeRow, PaymentDisputesService } from '../disputes/disputes-service.ts';
import {
  EVIDENCE_TEXT_FIELDS,
  MAX_EVIDENCE_BYTES,
  MAX_EVIDENCE_FILES,
  MAX_EVIDENCE_TEXT,
} from '../disputes/evidence.ts';
import { type MerchantAuthenticator, merchantOf } from './authenticate.ts';
import { envelope, ok, paged, pagedEnvelope, pageOf, standardErrors } from './envelope.ts';
import { intField, pageQuery } from './fields.ts';
import { amountOf, iso } from './views.ts';

const DISPUTE_STATUSES = ['needs_response', 'under_review', 'won', 'lost', 'accepted'] as const;

export const disputeView = z.object({
  id: z.number().int(),
  transactionId: z.number().int().describe('the captured payment the network disputes'),
  orderId: z.number().int(),
  siteId: z.number().int(),
  chargebackTransactionId: z.number().int(),
  representmentTransactionId: z.number().int().nullable(),
  status: z.enum(DISPUTE_STATUSES),
  network: z.string(),
  reasonCode: z.string(),
  amount: z.number(),
  fee: z.number().describe('the dispute fee taken with the chargeback'),
  uncoveredAmount: z
    .number()
    .describe('what the site balance could not cover when the network took the money'),
  currency: z.string(),
  evidenceDueBy: z.string(),
  decideBy: z.string().nullable(),
  evidence: z.object({
    text: z.record(z.string(), z.string()).nullable(),
    files: z.array(
      z.object({
        id: z.number().int(),
        field: z.string(),
        filename: z.string(),
        contentType: z.string(),
        bytes: z.number().int(),
      }),
    ),
  }),
  createdAt: z.string(),
  decidedAt: z.string().nullable(),
});

export async function presentDispute(
  d: DisputeRow,
  disputes: PaymentDisputesService,
): Promise<z.infer<typeof disputeView>> {
  const files = await disputes.evidenceOf(d.id);
  return {
    id: d.id,
    transactionId: d.transaction_id,
    orderId: d.order_id,
    siteId: d.site_id,
    chargebackTransactionId: d.chargeback_transaction_id,
    representmentTransactionId: d.representment_transaction_id,
    status: d.status,
    network: d.network,
    reasonCode: d.reason_code,
    amount: amountOf(d.amount, d.currency),
    fee: amountOf(d.fee, d.currency),
    uncoveredAmount: amountOf(d.uncovered_amount, d.currency),
    currency: d.currency,
    evidenceDueBy: iso(d.evidence_due_at) ?? '',
    decideBy: iso(d.decide_at),
    evidence: {
      text: d.evidence_text,
      files: files.map((f) => ({
        id: f.id,
        field: f.field,
        filename: f.filename,
        contentType: f.content_type,
        bytes: f.bytes,
      })),
    },
    createdAt: iso(d.created_at) ?? '',
    decidedAt: iso(d.decided_at),
  };
}

export async function registerDisputesRoutes(
  app: ZodApp,
  deps: { disputes: PaymentDisputesService; authenticate: MerchantAuthenticator },
): Promise<void> {
  const { disputes } = deps;
  const common = { onRequest: deps.authenticate };
  const idParam = z.object({ id: intField });

  app.get(
    '/dispute',
    {
      ...common,
      schema: {
        summary: 'List disputes (chargebacks) — Tessera extension',
        tags: ['disputes'],
        querystring: z.object({
          transactionId: intField.optional(),
          status: z.enum(DISPUTE_STATUSES).optional(),
          ...pageQuery,
        }),
        response: { 200: pagedEnvelope(disputeView), ...standardErrors },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const { items, total } = await disputes.list(
        merchantOf(request),
        { transactionId: request.query.transactionId, status: request.query.status },
        page,
      );
      return paged(await Promise.all(items.map((d) => presentDispute(d, disputes))), total, page);
    },
  );

  app.get(
    '/dispute/:id',
    {
      ...common,
      schema: {
        summary: 'Retrieve a dispute — Tessera extension',
        tags: ['disputes'],
        params: idParam,
        response: { 200: envelope(disputeView), ...standardErrors },
      },
    },
    async (request) =>
      ok(await presentDispute(await disputes.get(merchantOf(request), request.params.id), disputes)),
  );

  app.post(
    '/dispute/:id/accept',
    {
      ...common,
      schema: {
        summary: 'Accept a chargeback: the money stays with the cardholder — Tessera extension',
        description: '409 once the dispute was answered or decided, or past its deadline.',
        tags: ['disputes'],
        params: idParam,
        response: { 200: envelope(disputeView), ...standardErrors },
      },
    },
    async (request) =>
      ok(await presentDispute(await disputes.accept(merchantOf(request), request.params.id), disputes)),
  );

  // Multipart is read here only: the evidence route has its own parser, the rest of the API keeps its
  // form and JSON bodies.
  await app.register(async (child) => {
    const scoped = child as unknown as ZodApp;
    await scoped.register(multipart, {
      limits: {
        fileSize: MAX_EVIDENCE_BYTES,
        files: MAX_EVIDENCE_FILES,
        fields: 20,
        fieldSize: MAX_EVIDENCE_TEXT,
      },
    });
    scoped.post(
      '/dispute/:id/evidence',
      {
        ...common,
        // An upload's body is not read before the handler, so a key could not tell two answers apart;
        // none is needed: a dispute takes one answer, a repeat is a 409.
        config: { idempotency: 'refuse' },
        schema: {
          summary: 'Answer a chargeback with evidence — Tessera extension',
          description: `A multipart/form-data body: up to ${MAX_EVIDENCE_FILES} files (any field names), each a PDF, PNG or JPEG (read from its content, not its name) of at most 5 MB, and text fields among ${EVIDENCE_TEXT_FIELDS.join(', ')} (each at most ${MAX_EVIDENCE_TEXT} characters). The files are stored encrypted. The dispute goes under review; the network decides within 5 sandbox days. 400 naming the file that is too large or of another type; 409 once answered or decided, or past the deadline. An Idempotency-Key is refused (400): the answer is taken once, and a repeat is a 409.`,
          tags: ['disputes'],
          consumes: ['multipart/form-data'],
          'x-multipart-body': {
            type: 'object',
            description:
              'Files under any field names (PDF, PNG or JPEG, at most 5 MB each), and the text fields.',
            properties: {
              files: {
                type: 'array',
                items: { type: 'string', format: 'binary' },
                maxItems: MAX_EVIDENCE_FILES,
              },
              ...Object.fromEntries(
                EVIDENCE_TEXT_FIELDS.map((name) => [name, { type: 'string', maxLength: MAX_EVIDENCE_TEXT }]),
              ),
            },
          },
          params: idParam,
          response: { 200: envelope(disputeView), ...standardErrors },
        },
      },
      async (request) => {
        const { files, text } = await readUploads(request, {
          field: 'evidence',
          what: 'the evidence',
          maxFiles: MAX_EVIDENCE_FILES,
          maxFields: 20,
          textFields: EVIDENCE_TEXT_FIELDS,
          maxText: MAX_EVIDENCE_TEXT,
        });
        const d = await disputes.submitEvidence(merchantOf(request), request.params.id, { files, text });
        return ok(await presentDispute(d, disputes));
      },
    );
  });
}
