// A dispute's evidence files (docs/payments.md, Disputes): the limits of an answer, its text fields, and
// the check every upload (the API's, the console's) makes of each file — a document's, shared with the
// business profiles' documents (platform/http/uploaded-files.ts).
import {
  checkedUpload,
  fileTooLarge,
  MAX_UPLOAD_BYTES,
  sniffDocument,
  type UploadedFile,
} from '../../platform/http/uploaded-files.ts';

/** An evidence file: an uploaded document (platform/http/uploaded-files.ts) */
export type EvidenceFile = UploadedFile;

/** The largest evidence file, in bytes */
export const MAX_EVIDENCE_BYTES = MAX_UPLOAD_BYTES;
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

export {
  checkedUpload as checkedEvidenceFile,
  fileTooLarge as evidenceTooLarge,
  sniffDocument as sniffEvidence,
};
