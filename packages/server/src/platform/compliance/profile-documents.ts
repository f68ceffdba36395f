// A business profile's documents (docs/compliance.md, Onboarding; migration 0070): the files a reviewer
// reads beside the profile — a registry extract, a proof of address, the ownership structure, identity
// documents. Each is a document upload (platform/http/uploaded-files.ts: PDF, PNG or JPEG by its bytes, at
// most 5 MB), kept encrypted with the tenant as the key's associated data, so one tenant's file never
// decrypts as another's. A profile holds at most MAX_DOCUMENTS.
import { createHash } from 'node:crypto';
import type { Clock } from '../clock/clock.ts';
import type { Encryptor } from '../crypto/encryption.ts';
import type { Executor, Tx } from '../db/database.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import type { UploadedFile } from '../http/uploaded-files.ts';
import type { ProfileTenant } from './business-profiles.ts';

export const DOCUMENT_KINDS = [
  'registration_extract',
  'proof_of_address',
  'ownership_structure',
  'identity_document',
  'other',
] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

export const MAX_DOCUMENTS = 50;

export interface ProfileDocument {
  id: string;
  kind: string;
  filename: string;
  contentType: string;
  bytes: number;
  sha256: string;
  uploadedBy: string;
  uploadedAt: Date;
}

const COLUMNS = [
  'id',
  'kind',
  'filename',
  'content_type',
  'bytes',
  'sha256',
  'uploaded_by',
  'uploaded_at',
] as const;

export class ProfileDocuments {
  constructor(private readonly deps: { clock: Clock; encryptor: Encryptor }) {}

  /** The files added to the tenant's profile (which must exist), as one step */
  async add(
    tx: Tx,
    tenant: ProfileTenant,
    upload: { files: readonly UploadedFile[]; kind: DocumentKind; by: string },
  ): Promise<ProfileDocument[]> {
    const profile = await tx
      .selectFrom('business_profiles')
      .select('tenant')
      .where('tenant', '=', tenant)
      .forUpdate()
      .executeTakeFirst();
    if (!profile) throw notFound('business profile');
    if (upload.files.length === 0)
      throw new DomainError('validation_failed', 'send at least one file', { field: 'documents' });
    const held = await tx
      .selectFrom('business_profile_documents')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenant', '=', tenant)
      .executeTakeFirstOrThrow();
    if (Number(held.n) + upload.files.length > MAX_DOCUMENTS) {
      throw new DomainError('validation_failed', `a profile holds at most ${MAX_DOCUMENTS} documents`, {
        field: 'documents',
        details: { held: Number(held.n) },
      });
    }
    const now = this.deps.clock.now();
    const rows = await tx
      .insertInto('business_profile_documents')
      .values(
        upload.files.map((f) => ({
          tenant,
          kind: upload.kind,
          filename: f.filename,
          content_type: f.contentType,
          bytes: f.bytes.length,
          sha256: createHash('sha256').update(f.bytes).digest('hex'),
          content_enc: this.deps.encryptor.encrypt(f.bytes.toString('base64'), aad(tenant)),
          uploaded_by: upload.by,
          uploaded_at: now,
        })),
      )
      .returning(COLUMNS)
      .execute();
    return rows.map(documentOf);
  }

  async list(db: Executor, tenant: ProfileTenant): Promise<ProfileDocument[]> {
    const rows = await db
      .selectFrom('business_profile_documents')
      .select(COLUMNS)
      .where('tenant', '=', tenant)
      .orderBy('id')
      .execute();
    return rows.map(documentOf);
  }

  /** One document with its content, decrypted; another tenant's id is not found */
  async read(
    db: Executor,
    tenant: ProfileTenant,
    id: string,
  ): Promise<ProfileDocument & { content: Buffer }> {
    if (!/^[1-9]\d{0,17}$/.test(id)) throw notFound('document');
    const row = await db
      .selectFrom('business_profile_documents')
      .select([...COLUMNS, 'content_enc'])
      .where('tenant', '=', tenant)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('document');
    const content = Buffer.from(this.deps.encryptor.decrypt(row.content_enc, aad(tenant)), 'base64');
    return { ...documentOf(row), content };
  }
}

const aad = (tenant: ProfileTenant) => `business-profile-document:${tenant}`;

function documentOf(row: {
  id: string;
  kind: string;
  filename: string;
  content_type: string;
  bytes: number;
  sha256: string;
  uploaded_by: string;
  uploaded_at: Date;
}): ProfileDocument {
  return {
    id: row.id,
    kind: row.kind,
    filename: row.filename,
    contentType: row.content_type,
    bytes: row.bytes,
    sha256: row.sha256,
    uploadedBy: row.uploaded_by,
    uploadedAt: row.uploaded_at,
  };
}
