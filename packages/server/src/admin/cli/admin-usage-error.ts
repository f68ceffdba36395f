/** A usage mistake the CLI answers with its help and exit code 2 (its own module: the CLI loads it always). */
export class AdminUsageError extends Error {}
