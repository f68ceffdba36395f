// Request bodies as the payments service's clients send them (docs/wire-compatibility.md, Payments): form-encoded with
// PHP-style bracket keys (`a[b]=1`, `k[]=v`) or JSON, on every route including DELETE; an empty body
// is an empty object (shop plugins send a content type with no body on DELETE).
import qs from 'qs';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { parseClientJson } from '../../platform/http/client-json.ts';

export function acceptPaymentsBodies(app: ZodApp): void {
  app.removeContentTypeParser(['application/x-www-form-urlencoded', 'application/json']);
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => {
      // Depth and array limits bound what a hostile body can make the parser build.
      done(null, qs.parse(String(body), { depth: 5, arrayLimit: 100, parameterLimit: 500 }));
    },
  );
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') {
      done(null, {});
      return;
    }
    try {
      done(null, parseClientJson(text, 'body'));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
