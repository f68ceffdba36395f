// Files uploaded as documents — a dispute's evidence, a business profile's documents: what a file is,
// read from its first bytes (never from its name or its declared type), the size limit, and the reading of
// a multipart/form-data body into checked files and text fields, every refusal a 400 naming the field.
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../errors/domain-error.ts';
import { multipartError } from './as-domain-error.ts';

export interface UploadedFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

/** The largest file, in bytes */
export const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;

/** The file's type by its signature: PDF, PNG or JPEG; undefined for anything else. */
export function sniffDocument(bytes: Uint8Array): 'application/pdf' | 'image/png' | 'image/jpeg' | undefined {
  const starts = (...signature: number[]) => signature.every((byte, i) => bytes[i] === byte);
  if (starts(0x25, 0x50, 0x44, 0x46, 0x2d)) return 'application/pdf'; // %PDF-
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  return undefined;
}

/** The refusal of a file over the size limit, naming the field (`errorField`) and the file. */
export const fileTooLarge = (filename: string, errorField: string) =>
  new DomainError('validation_failed', `${filename} is larger than 5 MB`, { field: errorField });

/** An uploaded file as it is kept: its size and type checked, a refusal naming the field and the file. */
export function checkedUpload(
  upload: { field: string; filename: string; bytes: Buffer; truncated: boolean },
  errorField = upload.field,
): UploadedFile {
  const filename = upload.filename.slice(0, 200);
  if (upload.truncated) throw fileTooLarge(filename, errorField);
  const contentType = sniffDocument(upload.bytes);
  if (!contentType) {
    throw new DomainError('validation_failed', `${filename} is not a PDF, PNG or JPEG file`, {
      field: errorField,
    });
  }
  return { field: upload.field, filename, contentType, bytes: upload.bytes };
}

/**
 * A multipart/form-data body (the route's scope registered @fastify/multipart with these limits) as its
 * checked files and its text fields among `textFields`. `field` names the body in a refusal of the whole.
 */
export async function readUploads(
  request: FastifyRequest,
  body: {
    field: string;
    what: string;
    maxFiles: number;
    maxFields: number;
    textFields: readonly string[];
    maxText: number;
  },
): Promise<{ files: UploadedFile[]; text: Record<string, string> }> {
  const refuse = (message: string, field = body.field) =>
    new DomainError('validation_failed', message, { field });
  if (!request.isMultipart()) throw refuse(`send ${body.what} as multipart/form-data`);
  const files: UploadedFile[] = [];
  const text: Record<string, string> = {};
  try {
    for await (const part of request.parts()) {
      if (!part.fieldname) throw refuse('every part of the body needs a name');
      if (part.type === 'file') {
        const name = part.filename || part.fieldname;
        const bytes = await part.toBuffer().catch((err: { code?: string }) => {
          throw err.code === 'FST_REQ_FILE_TOO_LARGE' ? fileTooLarge(name, part.fieldname) : err;
        });
        files.push(
          checkedUpload({ field: part.fieldname, filename: name, bytes, truncated: part.file.truncated }),
        );
      } else {
        if (!body.textFields.includes(part.fieldname))
          throw refuse(`unknown field; use ${body.textFields.join(', ')}`, part.fieldname);
        const value = String(part.value).trim();
        if (part.valueTruncated || value.length > body.maxText)
          throw refuse(`at most ${body.maxText} characters`, part.fieldname);
        if (value) text[part.fieldname] = value;
      }
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
      throw refuse(`at most ${body.maxFiles} files and ${body.maxFields} fields`);
    if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE' || code === 'FST_MULTIPART_INVALID_CONTENT_TYPE')
      throw refuse(`send ${body.what} as multipart/form-data`);
    if (err instanceof DomainError) throw err;
    // Nothing but the body's parser runs in this loop: whatever else it throws (no boundary, a truncated
    // body, a malformed part header) is the client's body, not our fault.
    throw multipartError(err, body.field) ?? refuse('the multipart body is malformed');
  }
  return { files, text };
}
