// /admin/compliance (docs/compliance.md): the sanctions lists imported from their official files, and the
// operator's own look-ups against them. An import's body is the list file itself (XML), read whole before
// anything is written; the same file twice is answered with its first import, applied once.
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Compliance } from '../../platform/compliance/compliance.ts';
import { ListFormatError, SANCTIONS_SOURCES } from '../../platform/compliance/sanctions-entry.ts';
import type { SanctionsImport } from '../../platform/compliance/sanctions-lists.ts';
import { OFAC_CSV_FILES, type OfacCsvFiles } from '../../platform/compliance/sanctions-ofac-csv.ts';
import { entrySummary, type ScreeningMatch } from '../../platform/compliance/screening-index.ts';
import type { Db } from '../../platform/db/database.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { asZod, type ZodApp } from '../../platform/http/api-scope.ts';
import { multipartError } from '../../platform/http/as-domain-error.ts';
import { int8Cursor } from '../../platform/http/fields.ts';
import { pageQuery } from './risk-scope.ts';
import { standardErrors, timestamp } from './schemas.ts';

/** The EU's full list is some 20 MB of XML; OFAC's SDN 10 MB */
const LIST_FILE_LIMIT = 64 * 1024 * 1024;
const XML_TYPES = ['application/xml', 'text/xml'];

/** The smallest UN list: one person with an alias, a nationality and a date of birth */
const EXAMPLE_LIST = `<?xml version="1.0" encoding="UTF-8"?>
<CONSOLIDATED_LIST dateGenerated="2026-11-30T18:00:00.000-05:00">
  <INDIVIDUALS>
    <INDIVIDUAL>
      <DATAID>6900001</DATAID>
      <FIRST_NAME>IVAN</FIRST_NAME>
      <SECOND_NAME>EXAMPLOV</SECOND_NAME>
      <UN_LIST_TYPE>DPRK</UN_LIST_TYPE>
      <REFERENCE_NUMBER>KPi.900</REFERENCE_NUMBER>
      <LISTED_ON>2026-01-15</LISTED_ON>
      <NATIONALITY><VALUE>Russian Federation</VALUE></NATIONALITY>
      <INDIVIDUAL_ALIAS><QUALITY>Good</QUALITY><ALIAS_NAME>Ivan Eksamplov</ALIAS_NAME></INDIVIDUAL_ALIAS>
      <INDIVIDUAL_DATE_OF_BIRTH><TYPE_OF_DATE>EXACT</TYPE_OF_DATE><DATE>1961-05-04</DATE></INDIVIDUAL_DATE_OF_BIRTH>
    </INDIVIDUAL>
  </INDIVIDUALS>
  <ENTITIES/>
</CONSOLIDATED_LIST>
`;

/** OFAC's CSV files from a multipart body, each part named sdn.csv, alt.csv, add.csv or sdn_comments.csv */
async function ofacCsvFiles(request: FastifyRequest): Promise<OfacCsvFiles> {
  const found: Partial<OfacCsvFiles> = {};
  try {
    for await (const part of request.parts()) {
      const name =
        OFAC_CSV_FILES[part.fieldname] ?? (part.type === 'file' ? OFAC_CSV_FILES[part.filename] : undefined);
      if (part.type !== 'file' || !name) {
        throw new DomainError(
          'validation_failed',
          `a part is one of ${Object.keys(OFAC_CSV_FILES).join(', ')}`,
          {
            field: part.fieldname || 'body',
          },
        );
      }
      found[name] = (await part.toBuffer()).toString('utf8');
    }
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw (
      multipartError(err, 'body') ??
      new DomainError('validation_failed', 'the multipart body is malformed', { field: 'body' })
    );
  }
  if (!found.sdn?.trim())
    throw new DomainError('validation_failed', 'sdn.csv is required', { field: 'sdn.csv' });
  return { ...found, sdn: found.sdn };
}

const importView = z.object({
  id: z.string(),
  source: z.enum(SANCTIONS_SOURCES),
  sha256: z.string().describe('the file’s SHA-256: the same file is applied once'),
  generatedAt: timestamp.nullable().describe('the file’s own publication date, when it says'),
  importedAt: timestamp,
  importedBy: z.string(),
  entries: z.number().int().describe('the entries in the file'),
  added: z.number().int(),
  changed: z.number().int().describe('entries whose content changed: a new version each'),
  removed: z.number().int().describe('entries the previous file had and this one does not'),
  rescreen: z
    .object({
      screened: z.number().int().describe('parties screened again so far'),
      alerts: z.number().int().describe('alerts the re-screen raised'),
      finishedAt: timestamp.nullable(),
    })
    .nullable()
    .describe('everyone screened again after the import, in the background: how far it has come'),
});
const presentImport = (i: SanctionsImport) => ({
  ...i,
  generatedAt: i.generatedAt?.toISOString() ?? null,
  importedAt: i.importedAt.toISOString(),
  rescreen: i.rescreen && { ...i.rescreen, finishedAt: i.rescreen.finishedAt?.toISOString() ?? null },
});

const matchView = z.object({
  score: z.number().describe('0–1: the names’ likeness, moved by the date of birth and the country'),
  nameScore: z.number(),
  matchedName: z.string().describe('the listed name (or alias) that matched best'),
  entry: z.object({
    id: z.string().describe('the version of the list entry matched'),
    source: z.enum(SANCTIONS_SOURCES),
    sourceId: z.string().describe('the list’s own id (EU logicalId, UN DATAID, OFAC uid)'),
    kind: z.string(),
    names: z.array(z.string()),
    birthDates: z.array(z.string()),
    nationalities: z.array(z.string()),
    programs: z.array(z.string()),
    reference: z.string().nullable(),
  }),
});
const presentMatch = (m: ScreeningMatch) => ({
  score: round(m.score),
  nameScore: round(m.nameScore),
  matchedName: m.matchedName,
  entry: entrySummary(m.entry),
});
const round = (n: number) => Math.round(n * 1000) / 1000;

export async function registerComplianceRoutes(
  app: ZodApp,
  deps: { db: Db; compliance: Compliance },
): Promise<void> {
  const { db } = deps;
  const { sanctions } = deps.compliance;
  // The import alone takes XML: every other admin route still answers it 415
  await app.register(async (plugin) => {
    const scoped = asZod(plugin);
    // OFAC's CSV files come as the parts of a multipart/form-data body
    await scoped.register(multipart, { limits: { fileSize: LIST_FILE_LIMIT, files: 4, fields: 0 } });
    scoped.addContentTypeParser(
      XML_TYPES,
      { parseAs: 'string', bodyLimit: LIST_FILE_LIMIT },
      (_request, body, done) => done(null, body),
    );

    scoped.post(
      '/compliance/sanctions/imports',
      {
        bodyLimit: LIST_FILE_LIMIT,
        schema: {
          summary:
            'Import a sanctions list from its official file (the EU’s FSF XML, the UN’s consolidated XML, OFAC’s sdn.xml): applied once, its entries versioned',
          tags: ['compliance'],
          querystring: z.object({
            source: z.enum(SANCTIONS_SOURCES).describe('whose list the file is').meta({ example: 'un' }),
          }),
          consumes: [...XML_TYPES, 'multipart/form-data'],
          'x-raw-body': {
            mediaTypes: XML_TYPES,
            schema: {
              type: 'string',
              description:
                'The list file as published: the EU’s `export` XML, the UN’s `CONSOLIDATED_LIST` XML or OFAC’s `sdnList` XML (at most 64 MB). OFAC’s list may come instead as its CSV files, the parts of a multipart/form-data body named (by field or file name) sdn.csv (required), alt.csv, add.csv and sdn_comments.csv',
            },
            example: EXAMPLE_LIST,
          },
          response: { 200: importView, 201: importView, ...standardErrors },
        },
      },
      async (request, reply) => {
        if (request.isMultipart()) {
          const files = await ofacCsvFiles(request);
          try {
            const done = await sanctions.import(db, request.query.source, files, 'admin token');
            return reply.code(done.applied ? 201 : 200).send(presentImport(done.import));
          } catch (err) {
            if (!(err instanceof ListFormatError)) throw err;
            throw new DomainError('validation_failed', err.message, { field: 'sdn.csv' });
          }
        }
        if (typeof request.body !== 'string' || request.body.trim() === '') {
          throw new DomainError('validation_failed', 'the body is the list file, as application/xml', {
            field: 'body',
          });
        }
        try {
          const done = await sanctions.import(db, request.query.source, request.body, 'admin token');
          return reply.code(done.applied ? 201 : 200).send(presentImport(done.import));
        } catch (err) {
          if (!(err instanceof ListFormatError)) throw err;
          throw new DomainError('validation_failed', err.message, { field: 'body' });
        }
      },
    );
  });

  app.get(
    '/compliance/sanctions/imports',
    {
      schema: {
        summary: 'The sanctions lists’ imports, newest first',
        tags: ['compliance'],
        querystring: z.object({ before: int8Cursor('an import id').optional(), limit: pageQuery.limit }),
        response: {
          200: z.object({ data: z.array(importView), nextBefore: z.string().nullable() }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const { before, limit } = request.query;
      const imports = await sanctions.imports(db, { ...(before ? { before } : {}), limit });
      return {
        data: imports.map(presentImport),
        nextBefore: imports.length === limit ? (imports.at(-1)?.id ?? null) : null,
      };
    },
  );

  app.post(
    '/compliance/screen',
    {
      schema: {
        summary:
          'Screen a name against the sanctions lists: the entries it matches, with their scores (no side effect: the operator’s own look-up)',
        tags: ['compliance'],
        body: z.strictObject({
          name: z.string().trim().min(1).max(300),
          dateOfBirth: z
            .string()
            .regex(/^\d{4}(-\d{2}-\d{2})?$/, 'YYYY-MM-DD or YYYY')
            .optional(),
          country: z
            .string()
            .regex(/^[A-Z]{2}$/, 'an ISO 3166 alpha-2 code')
            .optional()
            .describe('nationality or residence'),
          address: z
            .string()
            .max(300)
            .optional()
            .describe('a digital-currency address, checked against OFAC’s exactly'),
          threshold: z
            .number()
            .min(0.5)
            .max(1)
            .optional()
            .describe('the score to match at (default: TESSERA_SCREENING_THRESHOLD)'),
        }),
        response: {
          200: z.object({
            threshold: z.number(),
            matches: z.array(matchView),
            addressMatches: z.array(matchView.shape.entry),
          }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const { address, threshold = sanctions.threshold, ...party } = request.body;
      const matches = await sanctions.screen(db, party, threshold);
      const byAddress = address ? await sanctions.screenAddress(db, address) : [];
      return {
        threshold,
        matches: matches.slice(0, 20).map(presentMatch),
        addressMatches: byAddress.map(entrySummary),
      };
    },
  );
}
