// Forms that change something (the console's, a hosted page's) are taken only from a page of this origin:
// a browser that says where a request came from must say it came from here.
import type { FastifyRequest } from 'fastify';

export function sameOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site === 'same-origin') return true;
  if (typeof site === 'string' && site !== 'none') return false;
  const origin = request.headers.origin;
  if (typeof origin !== 'string' || origin === 'null') return origin === undefined;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}
