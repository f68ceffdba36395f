// Console › Compliance › Cases (docs/compliance.md, Console): the cases screening and monitoring opened,
// each with its alerts — the party as screened beside the list entry it matched — what it holds, its
// notes and its timeline; a compliance officer notes, assigns, clears or confirms it through the same
// cases service as the admin API (under four eyes, the first decision waits for a second person's).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { timelineOf } from '../../../platform/compliance/case-timeline.ts';
import type { Alert, CaseDecision } from '../../../platform/compliance/compliance-cases.ts';
import {
  caseAsGoaml,
  goamlIndicators,
  goamlReportCode,
  goamlRequestOf,
} from '../../../platform/compliance/goaml-report.ts';
import { contextOf, sendConsolePage } from '../../../platform/console/console-http.ts';
import {
  details,
  doneNotice,
  filterForm,
  link,
  listView,
  notice,
  postForm,
} from '../../../platform/console/console-layout.ts';
import { type Html, h } from '../../../platform/console/html-template.ts';
import type { LabelKind } from '../../../platform/console/labels.ts';
import {
  confirmedAction,
  fieldOf,
  textBody,
  textQuery,
  viewerOf,
} from '../../../platform/console/route-kit.ts';
import { status, statusFact, term, when } from '../../../platform/console/values.ts';
import { sendCsv } from '../../../platform/http/csv-reply.ts';
import { isInt8Digits } from '../../../platform/http/fields.ts';
import { toCsv } from '../../../platform/payouts/reports.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import { actorOf, complianceTabs, complianceText } from './compliance-console-kit.ts';
import { pageAfter } from './risk-console-kit.ts';

const PAGE = 50;
const STATUSES = ['open', 'cleared', 'confirmed'] as const;

/** What each decision does, said before it is made */
const OUTCOMES: Record<CaseDecision, { verb: string; explain: string }> = {
  cleared: {
    verb: 'Clear',
    explain:
      'A false positive: everything the case holds is released (cards back to the status they had, held payouts released), and the same match is not raised again until the person or the list entry changes.',
  },
  confirmed: {
    verb: 'Confirm',
    explain:
      'A true match or a suspicion upheld: the subject stays held (a scenario’s case holds it from now), released only by a later decision that clears the case.',
  },
};

export async function registerComplianceCasesConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db, compliance } = deps.services;
  const { cases } = compliance;

  app.get('/compliance/cases', async (request, reply) => {
    const f = textQuery(request);
    const state = STATUSES.find((s) => s === f.status) ?? 'open';
    const tenant = f.tenant?.trim() || undefined;
    const found = await cases.list(db, {
      status: state,
      ...(tenant ? { tenant } : {}),
      ...(f.before && isInt8Digits(f.before) ? { before: f.before } : {}),
      limit: PAGE,
    });
    const filters = filterForm(
      '/console/compliance/cases',
      [
        { name: 'status', label: 'Status', options: STATUSES, labels: 'compliance.case' },
        { name: 'tenant', label: 'Tenant (partner:ID, merchant:ID, store:ID)' },
      ],
      f,
    );
    const table = listView({
      caption: `Cases ${state}, newest first`,
      rows: found,
      empty: state === 'open' ? 'No case is open.' : `No ${state} cases.`,
      nextHref: pageAfter('/console/compliance/cases', f, found, PAGE, 'before'),
      columns: [
        { label: 'Case', cell: (c) => link(`/console/compliance/cases/${c.id}`, `Case ${c.id}`) },
        { label: 'About', cell: (c) => c.subject },
        { label: 'Tenant', cell: (c) => c.tenant },
        { label: 'Alerts', cell: (c) => c.alerts },
        { label: 'Assignee', cell: (c) => c.assignee ?? 'nobody' },
        {
          label: 'Waiting for',
          cell: (c) =>
            c.proposal
              ? `a second person to ${c.proposal.decision === 'cleared' ? 'clear' : 'confirm'}`
              : '—',
        },
        { label: 'Opened', cell: (c) => when(c.openedAt) },
      ],
    });
    return sendConsolePage(
      request,
      reply,
      deps,
      'Compliance cases',
      h`${complianceTabs('cases')}${filters}${table}`,
    );
  });

  app.get<{ Params: { id: string } }>('/compliance/cases/:id', async (request, reply) => {
    const found = await cases.get(db, request.params.id);
    const c = found.case;
    const ctx = contextOf(request, deps);
    const path = `/console/compliance/cases/${c.id}`;
    const actions = h`<p class="inline">${
      c.status === 'open'
        ? h`${link(`${path}/assign`, 'Assign…')} ${link(`${path}/confirm`, 'Confirm…')} `
        : ''
    }${c.status !== 'cleared' ? link(`${path}/clear`, 'Clear…') : ''}</p>`;
    const proposal = c.proposal
      ? notice(
          `${c.proposal.by} proposed to ${c.proposal.decision === 'cleared' ? 'clear' : 'confirm'} this case on ${c.proposal.at.toISOString().slice(0, 16).replace('T', ' ')}: ${c.proposal.reason}. A second person makes the decision.`,
        )
      : '';
    const content = h`${complianceTabs('cases')}${doneNotice(textQuery(request).done)}${proposal}${details([
      ['Status', statusFact(c.status, 'compliance.case')],
      ['About', c.subject],
      ['Tenant', c.tenant],
      ['Assignee', c.assignee ?? 'nobody'],
      ['Opened', when(c.openedAt)],
      ['Decided', c.decidedAt ? h`${when(c.decidedAt)} by ${c.decidedBy}: ${c.decisionReason}` : '—'],
    ])}${actions}
<h2>Alerts</h2>${found.alerts.map(alertView)}
${listView({
  caption: 'What the case holds',
  rows: found.holds,
  empty: 'It holds nothing (a monitoring case holds its subject once confirmed).',
  columns: [
    { label: 'Held', cell: (x) => `${x.object_kind} ${x.object_id}` },
    { label: 'Was', cell: (x) => heldStatus(x.object_kind, x.previous_status) },
    { label: 'Since', cell: (x) => when(x.placed_at) },
    { label: 'Released', cell: (x) => when(x.released_at) },
  ],
})}
<h2>Notes</h2>${listView({
      caption: 'Notes, oldest first',
      rows: found.notes,
      empty: 'No notes yet.',
      columns: [
        { label: 'By', cell: (n) => n.author },
        { label: 'Note', cell: (n) => n.body },
        { label: 'At', cell: (n) => when(n.created_at) },
      ],
    })}${postForm(ctx, `${path}/notes`, [{ name: 'body', label: 'Add a note', type: 'textarea', required: true }], 'Add the note', { idempotent: true })}
<h2>Timeline</h2>${listView({
      caption: 'Everything that happened to the case',
      rows: timelineOf(found),
      columns: [
        { label: 'At', cell: (t) => when(t.at) },
        { label: 'What', cell: (t) => term(t.kind, 'compliance.timeline') },
        { label: 'Object', cell: (t) => t.object ?? '—' },
        { label: 'Detail', cell: (t) => t.detail },
      ],
    })}<p>${link(`${path}/timeline.csv`, 'The timeline as CSV')} (for a suspicious activity report)</p>
<h2>Report to the FIU</h2>${
      compliance.goaml
        ? h`<p>The case as a goAML report (XML) for the financial intelligence unit's portal. The indicators are the FIU's own codes, comma-separated.</p>
<form class="filters" method="get" action="${path}/goaml.xml"><span class="filter-field"><label for="goaml-reportCode">Report code</label><input id="goaml-reportCode" name="reportCode" value="SAR" maxlength="10" required></span><span class="filter-field"><label for="goaml-indicators">Indicators</label><input id="goaml-indicators" name="indicators" maxlength="1050" required></span><button type="submit">Download the goAML report</button></form>`
        : h`<p>goAML reports need the reporting entity the FIU registered the operator under: set <code>TESSERA_GOAML_RENTITY_ID</code>.</p>`
    }`;
    return sendConsolePage(request, reply, deps, `Case ${c.id}`, content);
  });

  app.get<{ Params: { id: string } }>('/compliance/cases/:id/goaml.xml', async (request, reply) => {
    const query = textQuery(request);
    const found = await cases.get(db, request.params.id);
    const report = await caseAsGoaml(db, compliance.goaml, found, {
      ...goamlRequestOf(
        fieldOf(goamlReportCode, query, 'reportCode'),
        fieldOf(goamlIndicators, query, 'indicators'),
      ),
      at: deps.services.clock.now(),
    });
    return reply
      .type('application/xml; charset=utf-8')
      .header('content-disposition', `attachment; filename="goaml-case-${found.case.id}.xml"`)
      .send(report);
  });

  app.get<{ Params: { id: string } }>('/compliance/cases/:id/timeline.csv', async (request, reply) => {
    const found = await cases.get(db, request.params.id);
    return sendCsv(
      reply,
      `compliance-case-${found.case.id}.csv`,
      toCsv(
        ['at', 'kind', 'object', 'detail'],
        timelineOf(found).map((t) => [t.at.toISOString(), t.kind, t.object ?? '', t.detail]),
      ),
    );
  });

  app.post<{ Params: { id: string } }>('/compliance/cases/:id/notes', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const body = fieldOf(complianceText(10_000), textBody(request), 'body');
    await db.transaction().execute((tx) => cases.addNote(tx, request.params.id, actorOf(viewer), body));
    return reply
      .code(303)
      .header('location', `/console/compliance/cases/${request.params.id}?done=noted`)
      .send();
  });

  const assign = confirmedAction<{ id: string }>(
    deps,
    async (request, { id }) => {
      const { case: c } = await cases.get(db, id);
      return {
        title: `Assign case ${c.id}`,
        explain: h`<p>Who works the case about ${c.subject}. Empty: nobody.</p>`,
        fields: [
          {
            name: 'assignee',
            label: 'Assignee (an email)',
            value: c.assignee ?? actorOf(viewerOf(request, deps)),
          },
        ],
        submit: 'Assign',
      };
    },
    async (_request, { id }, body) => {
      // As the admin API takes it: too long is refused, naming the field, never cut; empty is nobody
      const assignee =
        fieldOf(z.string().trim().max(200, 'at most 200 characters'), body, 'assignee') || null;
      await db.transaction().execute((tx) => cases.assign(tx, id, assignee));
      return `/console/compliance/cases/${id}?done=saved`;
    },
  );
  app.get('/compliance/cases/:id/assign', assign.get);
  app.post('/compliance/cases/:id/assign', assign.post);

  for (const [verb, decision] of [
    ['clear', 'cleared'],
    ['confirm', 'confirmed'],
  ] as const) {
    const decide = confirmedAction<{ id: string }>(
      deps,
      async (_request, { id }) => {
        const { case: c } = await cases.get(db, id);
        const outcome = OUTCOMES[decision];
        const seconding = c.proposal?.decision === decision;
        return {
          title: `${outcome.verb} case ${c.id}`,
          explain: h`<p>About ${c.subject}. ${outcome.explain}</p>${
            seconding && c.proposal
              ? h`<p>${c.proposal.by} proposed it: ${c.proposal.reason}. Deciding the same makes it.</p>`
              : ''
          }`,
          fields: [{ name: 'reason', label: 'Reason', type: 'textarea', required: true }],
          submit: outcome.verb,
          ...(decision === 'cleared' ? {} : { danger: true }),
        };
      },
      async (request, { id }, body) => {
        const reason = fieldOf(complianceText(2000), body, 'reason');
        const by = actorOf(viewerOf(request, deps));
        const { proposed } = await db
          .transaction()
          .execute((tx) => cases.decide(tx, id, { decision, reason, by }));
        return `/console/compliance/cases/${id}?done=${proposed ? 'proposed' : decision}`;
      },
    );
    app.get(`/compliance/cases/:id/${verb}`, decide.get);
    app.post(`/compliance/cases/:id/${verb}`, decide.post);
  }
}

/** One alert: the party as screened beside the list entry it matched, or what a scenario saw */
function alertView(a: Alert): Html {
  const party = a.evidence.party as Record<string, unknown> | undefined;
  const entry = a.evidence.entry as Record<string, unknown> | undefined;
  const list = (v: unknown) =>
    Array.isArray(v) ? v.join('; ') : v === null || v === undefined ? '—' : String(v);
  const heading = h`<h3>Alert ${a.id}: ${a.kind === 'sanctions_match' ? 'sanctions match' : a.kind.replace('scenario:', 'scenario ')} <small>${when(a.createdAt)}</small></h3>`;
  if (!party || !entry) {
    return h`${heading}<p>${list(a.evidence.summary ?? '')}</p>${details(
      Object.entries(a.evidence)
        .filter(([k]) => k !== 'summary')
        .map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : list(v)]),
    )}`;
  }
  const rows: [string, string, string][] = [
    ['Name', list(party.name), list(entry.names)],
    ['Date of birth', list(party.dateOfBirth), list(entry.birthDates)],
    ['Country', list(party.country), list(entry.nationalities)],
    ['Programs', '', list(entry.programs)],
  ];
  return h`${heading}<p>Score ${a.score} (name ${list(a.evidence.nameScore)}), matched the listed name ${list(a.evidence.matchedName)}.</p>
<div class="scroll" tabindex="0" role="region" aria-label="Alert ${a.id} side by side"><table>
<caption>The ${list(party.kind)} as screened, beside ${list(entry.source).toUpperCase()} entry ${list(entry.sourceId)}</caption>
<thead><tr><th scope="col">Field</th><th scope="col">Screened</th><th scope="col">Listed</th></tr></thead>
<tbody>${rows.map(([k, mine, listed]) => h`<tr><th scope="row">${k}</th><td data-label="Screened">${mine || '—'}</td><td data-label="Listed">${listed}</td></tr>`)}</tbody>
</table></div>`;
}

/** The status a held object had, in its own lifecycle's words (a card's, a payout's) */
const HELD_STATUSES: Record<string, LabelKind> = { card: 'issuing.card', payout: 'payout' };
function heldStatus(kind: string, previous: string | null) {
  const labels = HELD_STATUSES[kind];
  return labels ? status(previous, labels) : term(previous);
}
