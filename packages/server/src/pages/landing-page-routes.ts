// `GET /` (and `/docs`): what runs here, for a person (HTML) or a script (JSON, when it asks for JSON
// rather than HTML): the three APIs with their base URLs, references and OpenAPI documents, the
// operator's admin and sandbox APIs, the sandbox's clock, and the operational endpoints.
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../platform/clock/clock.ts';
import { prefersJson } from '../platform/http/accept.ts';
import { escapeHtml, page, sendPage } from '../platform/pages/html.ts';
import { QUICK_STARTS } from './guide-routes.ts';

export interface LandingDeps {
  version: string;
  mode: 'sandbox' | 'production';
  publicUrl: string;
  clock: Clock;
  /** The APIs and their base paths, in the order shown */
  apis: { name: string; title: string; basePath: string; credential: string }[];
}

export async function registerLandingPageRoutes(app: FastifyInstance, deps: LandingDeps): Promise<void> {
  for (const path of ['/', '/docs']) {
    app.get(path, { schema: { hide: true } }, async (request, reply) => {
      const about = describe(deps);
      if (prefersJson(request.headers.accept)) return reply.send(about);
      return sendPage(reply, landingPage(about));
    });
  }
}

function describe(deps: LandingDeps) {
  const url = (path: string) => `${deps.publicUrl}${path}`;
  return {
    name: 'tessera',
    version: deps.version,
    mode: deps.mode,
    apis: deps.apis.map((api) => ({
      name: api.name,
      title: api.title,
      baseUrl: url(api.basePath),
      reference: url(`${api.basePath}/docs/`),
      openapi: url(`/docs/${api.name}/openapi.json`),
      credential: api.credential,
    })),
    quickStarts: QUICK_STARTS.map((guide) => ({
      title: guide.title,
      url: url(`/docs/guides/${guide.name}`),
    })),
    sandbox: deps.mode === 'sandbox' ? { clock: deps.clock.now().toISOString() } : null,
    health: { live: url('/healthz'), ready: url('/readyz'), metrics: url('/metrics') },
  };
}

type About = ReturnType<typeof describe>;

function landingPage(about: About): string {
  const rows = about.apis
    .map(
      (
        api,
      ) => `<tr><th scope="row">${escapeHtml(api.title)}</th><td><code>${escapeHtml(api.baseUrl)}</code></td>
<td>${escapeHtml(api.credential)}</td>
<td><a href="${escapeHtml(api.reference)}">Reference</a> · <a href="${escapeHtml(api.openapi)}">OpenAPI</a></td></tr>`,
    )
    .join('\n');
  const sandbox = about.sandbox
    ? `<h2>Sandbox</h2>
<p>Every outside system is simulated. Sandbox clock: <time id="sandbox-clock" datetime="${escapeHtml(about.sandbox.clock)}">${escapeHtml(about.sandbox.clock)}</time>.
Drive it with the sandbox API (admin token, printed at start and kept in the data directory's <code>secrets.json</code>).</p>`
    : '<h2>Production</h2><p>Rails are pointed at real providers.</p>';
  return page(
    'Tessera',
    `<h1>Tessera <small>${escapeHtml(about.version)} · ${escapeHtml(about.mode)}</small></h1>
<p>Card issuing, card payments and crypto payments on one ledger. <a href="/console">Open the console</a>.</p>
<h2>Quick starts</h2>
<p>A page of requests to paste in order, for each API (CI runs them as written):</p>
<ul>${about.quickStarts.map((guide) => `<li><a href="${escapeHtml(guide.url)}">${escapeHtml(guide.title)}</a></li>`).join('')}</ul>
<h2>APIs</h2>
<div class="scroll" tabindex="0" role="region" aria-label="APIs"><table><thead><tr><th scope="col">API</th><th scope="col">Base URL</th><th scope="col">Credential</th><th scope="col">Documentation</th></tr></thead>
<tbody>
${rows}
</tbody></table></div>
${sandbox}
<h2>Operations</h2>
<ul><li><a href="${escapeHtml(about.health.live)}">Liveness</a></li><li><a href="${escapeHtml(about.health.ready)}">Readiness</a></li><li><a href="${escapeHtml(about.health.metrics)}">Metrics</a> (Prometheus)</li></ul>`,
  );
}
