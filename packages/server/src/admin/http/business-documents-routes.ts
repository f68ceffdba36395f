// /admin/merchants/{id}/business-profile/documents and the store's (docs/compliance.md, Onboarding): a
// business profile's documents uploaded (multipart: PDF, PNG or JPEG files read from their bytes, at most
// 5 MB each, and the `kind` they are), listed, and read back — decrypted, as an attachment. Uploads are
// audited; a document of another tenant is a 404.
import multipart from '@fastify/multipart';
import { z } from 'zod';
import type { Compliance } from '../../platform/compliance/compliance.ts';
import {
  DOCUMENT_KINDS,
  type DocumentKind,
  MAX_DOCUMENTS,
  type ProfileDocument,
} from '../../platform/compliance/profile-documents.ts';
import type { Db } from '../../platform/db/database.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { MAX_UPLOAD_BYTES, readUploads } from '../../platform/http/uploaded-files.ts';
import type { MerchantsService } from '../../platform/tenants/merchants-service.ts';
import type { StoresService } from '../../platform/tenants/stores-service.ts';
import { profileTenants } from './business-profile-routes.ts';
import { standardErrors, timestamp } from './schemas.ts';

const MAX_FILES = 10;

const documentView = z.object({
  id: z.string(),
  kind: z.enum(DOCUMENT_KINDS),
  filename: z.string(),
  contentType: z.enum(['application/pdf', 'image/png', 'image/jpeg']).describe('read from the file’s bytes'),
  bytes: z.number().int(),
  sha256: z.string(),
  uploadedBy: z.string(),
  uploadedAt: timestamp,
});
const present = (d: ProfileDocument) => ({
  ...d,
  kind: d.kind as DocumentKind,
  contentType: d.contentType as z.output<typeof documentView>['contentType'],
  uploadedAt: d.uploadedAt.toISOString(),
});

export async function registerBusinessDocumentRoutes(
  app: ZodApp,
  deps: { db: Db; compliance: Compliance; merchants: MerchantsService; stores: StoresService },
): Promise<void> {
  const { db } = deps;
  const { documents } = deps.compliance;
  for (const t of profileTenants(deps)) {
    const path = `${t.path}/documents`;
    app.get(
      path,
      {
        schema: {
          summary: `The ${t.whose}’s profile documents (names, kinds and sizes; the files stay encrypted)`,
          tags: [t.tag, 'compliance'],
          params: t.params,
          response: { 200: z.object({ data: z.array(documentView) }), ...standardErrors },
        },
      },
      async (request) => ({
        data: (await documents.list(db, await t.tenantOf(request.params))).map(present),
      }),
    );

    app.get(
      `${path}/:documentId`,
      {
        schema: {
          summary: `One of the ${t.whose}’s profile documents, as the file (an attachment)`,
          tags: [t.tag, 'compliance'],
          params: t.params.extend({ documentId: z.string().max(20) }),
          response: {
            // The file as it was given: each type under its own media type in the document
            200: z.union([
              z.string().describe('application/pdf'),
              z.string().describe('image/png'),
              z.string().describe('image/jpeg'),
            ]),
            ...standardErrors,
          },
        },
      },
      async (request, reply) => {
        const { documentId } = request.params as { documentId: string };
        const found = await documents.read(db, await t.tenantOf(request.params), documentId);
        return (
          reply
            .type(found.contentType)
            .header(
              'content-disposition',
              `attachment; filename="${found.filename.replace(/[^\w.-]/g, '_')}"`,
            )
            // A Buffer is sent as it is: the schema's string describes the document, the serializer never sees it
            .send(found.content as unknown as string)
        );
      },
    );

    // Multipart is read here only, in a scope of its own
    await app.register(async (child) => {
      const scoped = child as unknown as ZodApp;
      await scoped.register(multipart, {
        limits: { fileSize: MAX_UPLOAD_BYTES, files: MAX_FILES, fields: 1, fieldSize: 100 },
      });
      scoped.post(
        path,
        {
          // An upload's body is not read before the handler: a key could not tell two uploads apart
          config: { idempotency: 'refuse' },
          schema: {
            summary: `Add documents to the ${t.whose}’s business profile`,
            description: `A multipart/form-data body: up to ${MAX_FILES} files (any field names), each a PDF, PNG or JPEG (read from its content, not its name) of at most 5 MB, and the field \`kind\`: ${DOCUMENT_KINDS.join(', ')}. Stored encrypted; a profile holds at most ${MAX_DOCUMENTS}. 404 without a profile; 400 naming the file that is too large or of another type.`,
            tags: [t.tag, 'compliance'],
            consumes: ['multipart/form-data'],
            'x-multipart-body': {
              type: 'object',
              required: ['kind'],
              properties: {
                kind: { type: 'string', enum: [...DOCUMENT_KINDS] },
                files: { type: 'array', items: { type: 'string', format: 'binary' }, maxItems: MAX_FILES },
              },
            },
            params: t.params,
            response: { 201: z.object({ data: z.array(documentView) }), ...standardErrors },
          },
        },
        async (request, reply) => {
          const tenant = await t.tenantOf(request.params);
          const { files, text } = await readUploads(request, {
            field: 'documents',
            what: 'the documents',
            maxFiles: MAX_FILES,
            maxFields: 1,
            textFields: ['kind'],
            maxText: 100,
          });
          const kind = DOCUMENT_KINDS.find((k) => k === text.kind);
          if (!kind) {
            throw new DomainError('validation_failed', `kind is one of ${DOCUMENT_KINDS.join(', ')}`, {
              field: 'kind',
            });
          }
          const added = await db
            .transaction()
            .execute((tx) => documents.add(tx, tenant, { files, kind, by: 'admin token' }));
          return reply.code(201).send({ data: added.map(present) });
        },
      );
    });
  }
}
