// `Authorization: Bearer <credential>`: the scheme is case-insensitive (RFC 9110, 11.1), separated from
// the credential by spaces or tabs.
const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

export function bearerCredential(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
}
