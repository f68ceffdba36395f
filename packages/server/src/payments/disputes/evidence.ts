// A dispute's evidence files (docs/payments.md, Disputes): what a file is, read from its first bytes
// (never from the name or the declared type), and the limits.

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
