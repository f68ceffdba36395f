// The KYC vendor simulator's hosted page (GET/POST /hosted/kyc/{sessionId}): a real form where the person
// uploads a document image (JPEG, PNG or PDF, up to 5 MB) or picks a simulated outcome.
import { createHash } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Db } from '../../platform/db/database.ts';
import { runTransaction } from '../../platform/db/transact.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { multipartError } from '../../platform/http/as-domain-error.ts';
import { escapeHtml, noticePage, page } from '../../platform/pages/html.ts';
import { type Lang, languageOf } from '../../platform/pages/i18n.ts';
import { messagesFor } from '../../platform/pages/messages.ts';
import {
  type KycVendorSandbox,
  SIMULATED_OUTCOMES,
  type SimulatedOutcome,
  type SubmittedDocument,
  type VendorSession,
} from '../sandbox.ts';

const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;
const DOCUMENT_TYPES = new Set(['image/jpeg', 'image/png', 'application/pdf']);

export async function registerKycPageRoutes(
  app: FastifyInstance,
  deps: { db: Db; vendor: KycVendorSandbox },
): Promise<void> {
  await app.register(async (pages) => {
    await pages.register(multipart, { limits: { fileSize: MAX_DOCUMENT_BYTES, files: 1, fields: 10 } });

    pages.get<{ Params: { sessionId: string } }>('/hosted/kyc/:sessionId', async (request, reply) => {
      const session = await deps.vendor.find(deps.db, request.params.sessionId);
      return renderSession(reply, session, languageOf(request, reply));
    });

    pages.post<{ Params: { sessionId: string } }>('/hosted/kyc/:sessionId', async (request, reply) => {
      const session = await deps.vendor.find(deps.db, request.params.sessionId);
      const lang = languageOf(request, reply);
      if (session?.status !== 'open') return renderSession(reply, session, lang);
      let choice: string | undefined;
      let document: SubmittedDocument | undefined;
      try {
        for await (const part of request.parts()) {
          if (part.type === 'file') {
            const bytes = await part.toBuffer();
            if (part.file.truncated)
              throw new DomainError('validation_failed', 'the document is larger than 5 MB', {
                field: 'document',
              });
            if (bytes.length === 0) continue; // the form was sent without choosing a file
            if (!DOCUMENT_TYPES.has(part.mimetype)) {
              throw new DomainError('validation_failed', 'the document must be a JPEG, PNG or PDF file', {
                field: 'document',
              });
            }
            document = {
              name: part.filename.slice(0, 200),
              type: part.mimetype,
              bytes: bytes.length,
              sha256: createHash('sha256').update(bytes).digest('hex'),
            };
          } else if (part.fieldname === 'outcome') {
            choice = String(part.value);
          }
        }
        if (!choice || !(choice in SIMULATED_OUTCOMES))
          throw new DomainError('validation_failed', 'choose an outcome', { field: 'outcome' });
        const result = await runTransaction(deps.db, (tx) =>
          deps.vendor.submit(tx, session.id, {
            choice: choice as SimulatedOutcome,
            ...(document ? { document } : {}),
          }),
        );
        return renderSession(reply, result, lang);
      } catch (err) {
        if (err instanceof DomainError && err.status < 500)
          return renderSession(reply.code(err.status), session, lang, err.message);
        if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE')
          return renderSession(reply.code(413), session, lang, 'the document is larger than 5 MB');
        const malformed = multipartError(err, 'document');
        if (malformed) return renderSession(reply.code(malformed.status), session, lang, malformed.message);
        throw err;
      }
    });
  });
}

function renderSession(
  reply: FastifyReply,
  session: VendorSession | undefined,
  lang: Lang,
  error?: string,
): FastifyReply {
  const m = messagesFor(lang);
  reply.type('text/html; charset=utf-8').header('x-frame-options', 'DENY');
  if (!session)
    return reply.code(404).send(noticePage(m.verificationNotFound, m.verificationLinkInvalid, lang));
  if (session.status !== 'open') {
    const verified = session.status === 'verified';
    return reply.send(
      page(
        m.verificationComplete,
        `<h1>${escapeHtml(m.verificationComplete)}</h1><p class="notice" role="status" data-result="${session.status}">${escapeHtml(
          verified ? m.documentVerified : m.documentNotAccepted(session.rejectReason ?? 'rejected'),
        )}</p>`,
        undefined,
        lang,
      ),
    );
  }
  const options = Object.entries(SIMULATED_OUTCOMES)
    .map(
      ([value, o], i) =>
        `<label><input type="radio" name="outcome" value="${value}"${i === 0 ? ' checked' : ''}> ${escapeHtml(m.outcomeLabel[value] ?? o.label)}</label>`,
    )
    .join('\n');
  return reply.send(
    page(
      m.verifyTitle,
      `<h1>${escapeHtml(m.verifyYour(session.kind))}</h1>
<p>${escapeHtml(m.sandboxVendor)}</p>
${error ? `<p class="notice error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" enctype="multipart/form-data">
  <label for="document">${escapeHtml(m.documentField)}</label>
  <input id="document" name="document" type="file" accept="image/jpeg,image/png,application/pdf">
  <fieldset>
    <legend>${escapeHtml(m.simulatedOutcome)}</legend>
    ${options}
  </fieldset>
  <button type="submit">${escapeHtml(m.submit)}</button>
</form>`,
      undefined,
      lang,
    ),
  );
}
