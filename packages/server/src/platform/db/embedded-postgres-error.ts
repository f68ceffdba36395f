// Why the embedded Postgres could not start, with what the operator should do about it.
/** A start that cannot go on, with what the operator should do about it. */
export class EmbeddedPostgresError extends Error {
  constructor(message: string, fix: string) {
    super(`${message}\n  Fix: ${fix}`);
    this.name = 'EmbeddedPostgresError';
  }
}

export const indent = (text: string) =>
  text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
