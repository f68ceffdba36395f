// CSPRNG bytes drawn a page at a time. Asked for one by one, each draw is a native job announced to every
// async hook of the process (the request context's AsyncLocalStorage): for a 16-byte id it cost more than
// the id, and for a 12-byte nonce a third of encrypting an idempotency key's answer (docs/benchmarks.md).
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(4096);
let offset = pool.length;

/**
 * `size` fresh random bytes, never handed out twice. They are a view of the pool, which is refilled in
 * place: use them at once (copy them to keep them), before the next call.
 */
export function pooledRandomBytes(size: number): Buffer {
  if (offset + size > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  offset += size;
  return pool.subarray(offset - size, offset);
}
