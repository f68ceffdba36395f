// Console › Compliance › Screening and Monitoring (docs/compliance.md, Console): the sanctions matches
// screening raised and the monitoring scenarios' alerts, newest first, each opening its case; the lists'
// latest imports with their re-screens' progress; and a look-up of a name against the lists that has no
// side effect (the operator's own question, as POST /admin/compliance/screen).
import type { FastifyInstance } from 'fastify';
import type { Alert } from '../../../platform/compliance/compliance-cases.ts';
import { sendConsolePage } from '../../../platform/console/console-http.ts';
import { filterForm, link, listView, notice } from '../../../platform/console/console-layout.ts';
import { h } from '../../../platform/console/html-template.ts';
import { textQuery } from '../../../platform/console/route-kit.ts';
import { when } from '../../../platform/console/values.ts';
import { isInt8Digits } from '../../../platform/http/fields.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import { complianceTabs } from './compliance-console-kit.ts';
import { pageAfter } from './risk-console-kit.ts';

const PAGE = 50;

const caseLink = (a: Alert) => link(`/console/compliance/cases/${a.caseId}`, `Case ${a.caseId}`);
const text = (v: unknown) =>
  Array.isArray(v) ? v.join('; ') : v === null || v === undefined ? '—' : String(v);

export async function registerComplianceAlertsConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db, compliance } = deps.services;
  const { cases, sanctions } = compliance;

  app.get('/compliance/screening', async (request, reply) => {
    const f = textQuery(request);
    const name = f.name?.trim().slice(0, 300);
    let lookUp: ReturnType<typeof h> | '' = '';
    if (name) {
      const dateOfBirth = /^\d{4}(-\d{2}-\d{2})?$/.test(f.dateOfBirth ?? '') ? f.dateOfBirth : undefined;
      const country = /^[A-Z]{2}$/.test(f.country ?? '') ? f.country : undefined;
      const matches = await sanctions.screen(db, {
        name,
        ...(dateOfBirth ? { dateOfBirth } : {}),
        ...(country ? { country } : {}),
      });
      lookUp = listView({
        caption: `What “${name}” matches at the threshold ${sanctions.threshold}`,
        rows: matches.slice(0, 20),
        empty: `“${name}” matches no listed entry at the threshold ${sanctions.threshold}.`,
        columns: [
          { label: 'Listed name', cell: (m) => m.matchedName },
          { label: 'Score', cell: (m) => m.score.toFixed(3) },
          { label: 'List', cell: (m) => `${m.entry.source} ${m.entry.entry.sourceId}` },
          { label: 'Born', cell: (m) => text(m.entry.entry.birthDates) },
          { label: 'Nationality', cell: (m) => text(m.entry.entry.nationalities) },
          { label: 'Programs', cell: (m) => text(m.entry.entry.programs) },
        ],
      });
    }
    const imports = await sanctions.imports(db, { limit: 5 });
    const alerts = await cases.alerts(db, {
      kind: 'matches',
      ...(f.before && isInt8Digits(f.before) ? { before: f.before } : {}),
      limit: PAGE,
    });
    const content = h`${complianceTabs('screening')}
<h2>Look up a name</h2><p>Screens a name against the lists as they are now. Nothing is recorded and no case is opened.</p>
${filterForm(
  '/console/compliance/screening',
  [
    { name: 'name', label: 'Name' },
    { name: 'dateOfBirth', label: 'Date of birth (YYYY-MM-DD or YYYY)' },
    { name: 'country', label: 'Nationality or residence (ISO code, e.g. DE)' },
  ],
  f,
)}${lookUp}
<h2>Matches</h2>${listView({
      caption: 'Sanctions matches, newest first',
      rows: alerts,
      empty: 'Screening has matched nobody.',
      nextHref: pageAfter('/console/compliance/screening', f, alerts, PAGE, 'before'),
      columns: [
        { label: 'Screened', cell: (a) => `${text((a.evidence.party as { name?: string })?.name)}` },
        { label: 'Listed as', cell: (a) => text(a.evidence.matchedName) },
        {
          label: 'Entry',
          cell: (a) => {
            const e = a.evidence.entry as { source?: string; sourceId?: string } | undefined;
            return `${text(e?.source)} ${text(e?.sourceId)}`;
          },
        },
        { label: 'Score', cell: (a) => a.score },
        { label: 'Case', cell: caseLink },
        { label: 'Raised', cell: (a) => when(a.createdAt) },
      ],
    })}
<h2>Lists</h2>${
      imports.length === 0
        ? notice(
            'No list has been imported: nobody is screened against anything. Import the EU, UN and OFAC files (docs/compliance.md).',
            'error',
          )
        : listView({
            caption: 'The latest imports',
            rows: imports,
            columns: [
              { label: 'List', cell: (i) => i.source },
              { label: 'Published', cell: (i) => when(i.generatedAt) },
              { label: 'Imported', cell: (i) => when(i.importedAt) },
              { label: 'Entries', cell: (i) => `${i.entries} (+${i.added} ~${i.changed} −${i.removed})` },
              {
                label: 'Everyone screened again',
                cell: (i) =>
                  i.rescreen?.finishedAt
                    ? h`${when(i.rescreen.finishedAt)}: ${i.rescreen.screened} screened, ${i.rescreen.alerts} alerts`
                    : i.rescreen
                      ? `under way: ${i.rescreen.screened} screened`
                      : '—',
              },
            ],
          })
    }`;
    return sendConsolePage(request, reply, deps, 'Sanctions screening', content);
  });

  app.get('/compliance/monitoring', async (request, reply) => {
    const f = textQuery(request);
    const alerts = await cases.alerts(db, {
      kind: 'scenarios',
      ...(f.before && isInt8Digits(f.before) ? { before: f.before } : {}),
      limit: PAGE,
    });
    const structuring = compliance.aml.structuring;
    const content = h`${complianceTabs('monitoring')}<p>${
      structuring
        ? `Structuring: ${structuring.count} topups of one cardholder, each from 90 % of ${structuring.threshold} up to ${structuring.threshold} (major units), within ${structuring.windowHours} hours.`
        : 'Structuring is off (TESSERA_AML_STRUCTURING=off).'
    }</p>${listView({
      caption: 'Monitoring alerts, newest first',
      rows: alerts,
      empty: 'No scenario has been met.',
      nextHref: pageAfter('/console/compliance/monitoring', f, alerts, PAGE, 'before'),
      columns: [
        { label: 'Scenario', cell: (a) => a.kind.replace('scenario:', '') },
        { label: 'What it saw', cell: (a) => text(a.evidence.summary) },
        { label: 'Case', cell: caseLink },
        { label: 'Raised', cell: (a) => when(a.createdAt) },
      ],
    })}`;
    return sendConsolePage(request, reply, deps, 'Transaction monitoring', content);
  });
}
