// A case as a goAML report (docs/compliance.md, goAML): the XML that UNODC's goAML system — where most
// financial intelligence units take suspicious-activity reports — imports. The report is activity-based
// (a SAR by default: no transaction is asserted to be suspicious by itself): the reporting entity the FIU
// registered the operator as, the case's reference and date, why it is reported (the alerts) and what was
// done (the holds, the decision), the parties the case is about — each person with their name, date of
// birth and nationality, each business with its registration, each digital-currency address as an account
// — and the FIU's own indicator codes, which the compliance officer picks per report.
//
// goAML's schema is one per FIU (each publishes its own lookup codes) and its name fields take only
// Latin letters, digits, space and . ' -: a name in another script is written transliterated, with the
// original beside it where the schema has a place for it (a person's full_name_frn).
import anyAscii from 'any-ascii';
import { z } from 'zod';
import type { Executor } from '../db/database.ts';
import { DomainError, invalidState } from '../errors/domain-error.ts';
import type { CaseDetail } from './case-timeline.ts';

/** The reporting entity as the FIU registered it (TESSERA_GOAML_RENTITY_ID, …_BRANCH, …_REPORTING_USER) */
export interface GoamlSettings {
  rentityId: number;
  branch: string | null;
  /** The goAML user who reports for it (reporting_user_code), where the FIU's schema wants one */
  reportingUser: string | null;
  /** The currency amounts are reported in (TESSERA_REPORTING_CURRENCY) */
  currency: string;
}

/** What the officer asks for, as the admin API and the console read it (a query's text) */
export const goamlReportCode = z
  .string()
  .regex(/^[A-Za-z0-9-]{1,10}$/, 'a goAML report code such as SAR or STR')
  .default('SAR');
export const goamlIndicators = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,20}(,[A-Za-z0-9_-]{1,20}){0,49}$/, 'the FIU’s indicator codes, comma-separated')
  .optional();

/** The query's fields as the report takes them: the code in capitals, the indicators one by one */
export const goamlRequestOf = (reportCode: string, indicators: string | undefined) => ({
  reportCode: reportCode.toUpperCase(),
  indicators: indicators?.split(','),
});

export interface GoamlRequest {
  reportCode: string;
  indicators: readonly string[];
}

/** Someone or something the case is about, as the report names it */
export type ReportParty =
  | {
      kind: 'person';
      role: string;
      name: string;
      dateOfBirth: string | null;
      nationality: string | null;
    }
  | {
      kind: 'entity';
      role: string;
      name: string;
      tradingName: string | null;
      registrationNumber: string | null;
      country: string | null;
    }
  | { kind: 'address'; role: string; address: string; network: string | null };

/**
 * The case as a goAML report, once the operator is registered with its FIU (a 409 until then) and the
 * officer has named the indicators (a 400 naming `indicators` without them).
 */
export async function caseAsGoaml(
  db: Executor,
  settings: GoamlSettings | null,
  detail: CaseDetail,
  query: { reportCode: string; indicators: readonly string[] | undefined; at: Date },
): Promise<string> {
  if (!settings)
    throw invalidState(
      'goAML reports need the reporting entity the FIU registered: set TESSERA_GOAML_RENTITY_ID',
    );
  if (!query.indicators || query.indicators.length === 0)
    throw new DomainError('validation_failed', 'name at least one of the FIU’s indicator codes', {
      field: 'indicators',
    });
  const parties = await reportParties(db, detail);
  if (parties.length === 0)
    throw invalidState(
      'nothing is known of the case’s subject to report: no screened party, profile or address',
    );
  return writeGoamlReport({
    settings,
    request: { reportCode: query.reportCode, indicators: query.indicators },
    detail,
    parties,
    at: query.at,
  });
}

const PERSON_KINDS: Readonly<Record<string, string>> = {
  cardholder: 'cardholder',
  owner: 'beneficial owner',
  director: 'director',
};

/**
 * The parties of the case: those screened under its subject (not retired), the tenant's business as its
 * profile describes it, and the digital-currency address a case about one is about.
 */
async function reportParties(db: Executor, detail: CaseDetail): Promise<ReportParty[]> {
  const { subject, tenant } = detail.case;
  const parties: ReportParty[] = [];
  if (subject.startsWith('crypto_address:')) {
    const network = detail.alerts.map((a) => a.evidence.network).find((n) => typeof n === 'string');
    parties.push({
      kind: 'address',
      role: 'digital-currency address',
      address: subject.slice('crypto_address:'.length),
      network: network ?? null,
    });
  }
  const screened = await db
    .selectFrom('compliance_parties')
    .select(['kind', 'name', 'date_of_birth', 'country'])
    .where('subject', '=', subject)
    .where('retired_at', 'is', null)
    .orderBy('id')
    .execute();
  const profile = await db
    .selectFrom('business_profiles')
    .select('profile')
    .where('tenant', '=', tenant)
    .executeTakeFirst();
  const business = profile?.profile as
    | { legalName: string; tradingName?: string; registrationNumber: string; country: string }
    | undefined;
  if (business) {
    parties.push({
      kind: 'entity',
      role: 'business',
      name: business.legalName,
      tradingName: business.tradingName ?? null,
      registrationNumber: business.registrationNumber,
      country: business.country,
    });
  }
  for (const p of screened) {
    const role = PERSON_KINDS[p.kind];
    if (role) {
      parties.push({
        kind: 'person',
        role,
        name: p.name,
        dateOfBirth: p.date_of_birth,
        nationality: p.country,
      });
    } else if (p.kind === 'bank_account_holder' || !business) {
      parties.push({
        kind: 'entity',
        role: p.kind.replace(/_/g, ' '),
        name: p.name,
        tradingName: null,
        registrationNumber: null,
        country: p.country,
      });
    }
  }
  return parties;
}

function writeGoamlReport(input: {
  settings: GoamlSettings;
  request: GoamlRequest;
  detail: CaseDetail;
  parties: readonly ReportParty[];
  at: Date;
}): string {
  const { settings, request, detail, parties } = input;
  const c = detail.case;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<report>',
    `  <rentity_id>${settings.rentityId}</rentity_id>`,
    settings.branch ? `  <rentity_branch>${text(settings.branch, 255)}</rentity_branch>` : '',
    '  <submission_code>E</submission_code>',
    `  <report_code>${xml(request.reportCode)}</report_code>`,
    `  <entity_reference>tessera-case-${xml(c.id)}</entity_reference>`,
    `  <submission_date>${dateTime(input.at)}</submission_date>`,
    `  <currency_code_local>${xml(settings.currency)}</currency_code_local>`,
    settings.reportingUser
      ? `  <reporting_user_code>${xml(settings.reportingUser)}</reporting_user_code>`
      : '',
    `  <reason>${text(reasonOf(detail), 8000)}</reason>`,
    `  <action>${text(actionOf(detail), 8000)}</action>`,
    '  <activity>',
    '    <report_parties>',
    ...parties.map((p) => reportParty(p, detail)),
    '    </report_parties>',
    '  </activity>',
    '  <report_indicators>',
    ...request.indicators.map((i) => `    <indicator>${xml(i)}</indicator>`),
    '  </report_indicators>',
    '</report>',
  ];
  return `${lines.filter((l) => l !== '').join('\n')}\n`;
}

function reportParty(p: ReportParty, detail: CaseDetail): string {
  const name = p.kind === 'address' ? p.address : p.name;
  const matched = detail.alerts.flatMap((a) => {
    const entry = a.evidence.entry as { source?: string; sourceId?: string } | undefined;
    const party = a.evidence.party as { name?: string } | undefined;
    return entry && party?.name === name
      ? [`matched the ${entry.source?.toUpperCase()} list's entry ${entry.sourceId} (score ${a.score})`]
      : [];
  });
  const reason = text(
    `The ${p.role} in case ${detail.case.subject}${matched.length > 0 ? `; ${matched.join('; ')}` : ''}.`,
    8000,
  );
  if (p.kind === 'person') {
    const latin = latinName(p.name, 200);
    const tokens = latin.split(' ').filter((t) => t !== '');
    // A name of one word is a family name alone: goAML needs both, and '-' says there is no other
    const last = tokens.length > 1 ? (tokens.pop() as string) : (tokens[0] ?? '-');
    const first = tokens.length > 0 && tokens.join(' ') !== last ? tokens.join(' ') : '-';
    return [
      '      <report_party>',
      '        <person>',
      `          <first_name>${xml(first.slice(0, 100))}</first_name>`,
      `          <last_name>${xml(last.slice(0, 100))}</last_name>`,
      p.dateOfBirth && /^\d{4}-\d{2}-\d{2}$/.test(p.dateOfBirth)
        ? `          <birthdate>${p.dateOfBirth}T00:00:00</birthdate>`
        : '',
      latin !== p.name ? `          <full_name_frn>${text(p.name, 255)}</full_name_frn>` : '',
      p.nationality ? `          <nationality1>${xml(p.nationality)}</nationality1>` : '',
      '        </person>',
      `        <reason>${reason}</reason>`,
      '      </report_party>',
    ]
      .filter((l) => l !== '')
      .join('\n');
  }
  if (p.kind === 'entity') {
    const trading = p.tradingName ? latinName(p.tradingName, 255) : '';
    return [
      '      <report_party>',
      '        <entity>',
      `          <name>${xml(latinName(p.name, 255) || '-')}</name>`,
      trading ? `          <commercial_name>${xml(trading)}</commercial_name>` : '',
      p.registrationNumber
        ? `          <incorporation_number>${text(p.registrationNumber, 50)}</incorporation_number>`
        : '',
      p.country ? `          <incorporation_country_code>${xml(p.country)}</incorporation_country_code>` : '',
      '        </entity>',
      `        <reason>${reason}</reason>`,
      '      </report_party>',
    ]
      .filter((l) => l !== '')
      .join('\n');
  }
  return [
    '      <report_party>',
    '        <account>',
    `          <institution_name>${xml(p.network ? `${p.network} blockchain` : 'blockchain')}</institution_name>`,
    `          <institution_code>${xml(p.network ?? 'blockchain')}</institution_code>`,
    '          <non_bank_institution>true</non_bank_institution>',
    `          <account>${text(p.address, 255)}</account>`,
    '          <account_name>Unknown holder</account_name>',
    '        </account>',
    `        <reason>${reason}</reason>`,
    '      </report_party>',
  ].join('\n');
}

/** Why the case is reported: each alert's own words, in the order raised */
function reasonOf(detail: CaseDetail): string {
  const alerts = detail.alerts.map((a) => {
    const entry = a.evidence.entry as { source?: string; sourceId?: string } | undefined;
    const party = a.evidence.party as { name?: string } | undefined;
    const said = entry
      ? `${party?.name ?? 'a party'} matched ${String(a.evidence.matchedName)} on the ${entry.source?.toUpperCase()} list (entry ${entry.sourceId}, score ${a.score})`
      : String(a.evidence.summary ?? a.kind);
    return `${a.createdAt.toISOString().slice(0, 10)}: ${said}.`;
  });
  return [`Tessera compliance case ${detail.case.id} about ${detail.case.subject}.`, ...alerts].join(' ');
}

/** What was done: what the case held, and the decision with its reason */
function actionOf(detail: CaseDetail): string {
  const held = detail.holds
    .filter((h) => h.object_kind !== 'subject')
    .map((h) => `${h.object_kind} ${h.object_id}${h.released_at ? ' (since released)' : ''}`);
  const decided = detail.case.decidedAt
    ? `Decided ${detail.case.status} on ${detail.case.decidedAt.toISOString().slice(0, 10)}: ${detail.case.decisionReason ?? ''}`
    : 'Not decided yet.';
  return [
    detail.holds.length > 0 ? `The subject was held${held.length > 0 ? `: ${held.join(', ')}` : ''}.` : '',
    decided,
  ]
    .filter((s) => s !== '')
    .join(' ');
}

/** Latin letters, digits, space and . ' - only (goAML's name fields), from any script */
function latinName(name: string, max: number): string {
  return anyAscii(name)
    .replace(/[^a-zA-Z0-9 .'-]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, max)
    .trim();
}

/** Free text as XML character data: no control characters (XML 1.0 has no place for them), at most max */
function text(value: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters XML 1.0 cannot carry
  return xml(value.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, ' ').slice(0, max));
}

/** Text as XML character data (every value here is an element's content, never an attribute's) */
function xml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** goAML's date-time: xs:dateTime without a zone, here in UTC */
function dateTime(at: Date): string {
  return at.toISOString().slice(0, 19);
}
