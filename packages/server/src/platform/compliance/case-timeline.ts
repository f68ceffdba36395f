// A case's story in time order (docs/compliance.md, Alerts and cases): opened, each alert, each hold and
// its release, each note, the decision. The admin API's export and the console's case page both tell it.
import type { ComplianceCases } from './compliance-cases.ts';

export const TIMELINE_KINDS = ['opened', 'alert', 'held', 'note', 'released', 'decided'] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

export interface TimelineEntry {
  at: Date;
  kind: TimelineKind;
  /** The list entry (source:id), the object held, the note's author, the decider */
  object: string | null;
  detail: string;
}

export type CaseDetail = Awaited<ReturnType<ComplianceCases['get']>>;

export function timelineOf(d: CaseDetail): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    { at: d.case.openedAt, kind: 'opened', object: d.case.subject, detail: `case about ${d.case.subject}` },
  ];
  for (const a of d.alerts) {
    const entry = a.evidence.entry as { source?: string; sourceId?: string } | undefined;
    const party = a.evidence.party as { kind?: string; name?: string } | undefined;
    entries.push({
      at: a.createdAt,
      kind: 'alert',
      object: entry ? `${entry.source}:${entry.sourceId}` : a.kind,
      detail: entry
        ? `${party?.kind ?? 'party'} ${party?.name ?? ''} matched ${String(a.evidence.matchedName)} (score ${a.score})`
        : String(a.evidence.summary ?? a.kind),
    });
  }
  for (const h of d.holds) {
    const object = `${h.object_kind}:${h.object_id}`;
    entries.push({
      at: h.placed_at,
      kind: 'held',
      object,
      detail: h.previous_status ? `was ${h.previous_status}` : 'held as a whole: what it starts waits',
    });
    if (h.released_at)
      entries.push({ at: h.released_at, kind: 'released', object, detail: 'given back its status' });
  }
  for (const n of d.notes) entries.push({ at: n.created_at, kind: 'note', object: n.author, detail: n.body });
  if (d.case.decidedAt) {
    entries.push({
      at: d.case.decidedAt,
      kind: 'decided',
      object: d.case.decidedBy,
      detail: `${d.case.status}: ${d.case.decisionReason ?? ''}`,
    });
  }
  // What happened at one instant in the order a case's life has: opened, alerted, held, noted, released, decided
  const rank = (e: TimelineEntry) => TIMELINE_KINDS.indexOf(e.kind);
  return entries
    .map((e, i) => ({ e, i }))
    .sort((x, y) => x.e.at.getTime() - y.e.at.getTime() || rank(x.e) - rank(y.e) || x.i - y.i)
    .map(({ e }) => e);
}
