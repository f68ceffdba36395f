// A dispute's evidence files (docs/payments.md, Disputes): what a file is, read from its first bytes
// (never from the name or the declared type), the limits, and the check every upload (the API's, the
// console's) makes of each file.
import { DomainError } from '../../platform/errors/domain-error.ts';

export interface EvidenceFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

/** The largest evidence file, in bytes */
export const MAX_EVIDENCE_BYTES = 5 * 1024 * 1024;
/** The most files one answer carries */
export const MAX_EVIDENCE_FILES = 10;
/** The text fields of an answer, each at most 20,000 characters */
export const EVIDENCE_TEXT_FIELDS = [
  'productDescription',
  'customerCommunication',
  'shippingCarrier',
  'shippingTrackingNumber',
  'refundPolicy',
  'uncategorizedText',
] as const;
export const MAX_EVIDENCE_TEXT = 20_000;

/** The file's type by its signature: PDF, PNG or JPEG; undefined for anything else. */
export function sniffEvidence(bytes: Uint8Array): 'application/pdf' | 'image/png' | 'image/jpeg' | undefined {
  const starts = (...signature: number[]) => signature.every((byte, i) => bytes[i] === byte);
  if (starts(0x25, 0x50, 0x44, 0x46, 0x2d)) return 'application/pdf'; // %PDF-
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  return undefined;
}

/** The refusal of a file over the size limit, naming the field (`errorField`) and the file. */
export const evidenceTooLarge = (filename: string, errorField: string) =>
  new DomainError('validation_failed', `${filename} is larger than 5 MB`, { field: errorField });

/** An uploaded file as an answer keeps it: its size and type checked, a refusal naming the field and the file. */
export function checkedEvidenceFile(
  upload: { field: string; filename: string; bytes: Buffer; truncated: boolean },
  errorField = upload.field,
): EvidenceFile {
  const filename = upload.filename.slice(0, 200);
  if (upload.truncated) throw evidenceTooLarge(filename, errorField);
  const contentType = sniffEvidence(upload.bytes);
  if (!contentType) {
    throw new DomainError('validation_failed', `${filename} is not a PDF, PNG or JPEG file`, {
      field: errorField,
    });
  }
  return { field: upload.field, filename, contentType, bytes: upload.bytes };
}
