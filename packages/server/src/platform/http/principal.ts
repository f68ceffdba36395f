// Who is calling, as each API's authentication decides; read by idempotency and rate limiting.
export interface Principal {
  kind: 'admin' | 'console' | 'partner' | 'customer' | 'merchant' | 'store' | 'anonymous';
  id: string;
  /** Namespace of this caller's idempotency keys: keys never collide across tenants */
  scope: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}
