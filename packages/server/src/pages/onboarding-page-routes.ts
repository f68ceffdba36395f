// The hosted onboarding page (docs/compliance.md, Onboarding): `/onboarding/{token}`, the link of an
// invitation. The invited person tells who the business is, where, what it sells and who owns and runs
// it, and chooses the password of their console account; finishing submits the profile for review. The
// link is the only credential (no password until the end), so the form needs no other CSRF token: a page
// that does not know the link cannot post to it. Fields are read through the admin API's own profile
// schema, and each refusal is shown beside the field it names. The documents a reviewer reads come with
// the form (multipart): each checked as the admin API checks an upload, and kept with the profile in the
// transaction that submits it.
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { businessProfileInput } from '../platform/compliance/business-profile.ts';
import type { BusinessProfiles } from '../platform/compliance/business-profiles.ts';
import type { OnboardingInvitations } from '../platform/compliance/onboarding-invitations.ts';
import type { DocumentKind } from '../platform/compliance/profile-documents.ts';
import type { Db } from '../platform/db/database.ts';
import { asDomainError } from '../platform/http/as-domain-error.ts';
import { checkedUpload, MAX_UPLOAD_BYTES, type UploadedFile } from '../platform/http/uploaded-files.ts';
import { escapeHtml, noticePage, page, sendPage } from '../platform/pages/html.ts';
import {
  DOCUMENT_FIELDS,
  type Errors,
  type Form,
  formOf,
  formPage,
  MAX_PAGE_FILES,
  MIN_DIRECTOR_ROWS,
  MIN_PASSWORD,
  OWNER_ROWS,
} from './onboarding-page-form.ts';

/**
 * The admin API's body from the form: empty optional fields left out, empty owner and director rows
 * skipped. `rows` keeps which form row each kept one came from, so an error names the field shown.
 */
function bodyOf(form: Form, directorRows: number) {
  const text = (name: string) => form[name]?.trim() ?? '';
  const optional = (name: string) => (text(name) ? text(name) : undefined);
  const rowsOf = (prefix: string, count: number, fields: readonly string[]) =>
    Array.from({ length: count }, (_, i) => i).filter((i) => fields.some((f) => text(`${prefix}.${i}.${f}`)));
  const owners = rowsOf('owners', OWNER_ROWS, ['name', 'dateOfBirth', 'ownershipPercent']);
  const directors = rowsOf('directors', directorRows, ['name', 'dateOfBirth']);
  const volume = optional('expectedMonthlyVolume.amount');
  const body = {
    legalName: text('legalName'),
    ...(optional('tradingName') ? { tradingName: text('tradingName') } : {}),
    registrationNumber: text('registrationNumber'),
    country: text('country').toUpperCase(),
    address: {
      line1: text('address.line1'),
      ...(optional('address.line2') ? { line2: text('address.line2') } : {}),
      city: text('address.city'),
      postalCode: text('address.postalCode'),
      country: text('address.country').toUpperCase(),
    },
    mcc: text('mcc'),
    ...(optional('website') ? { website: text('website') } : {}),
    ...(volume
      ? {
          expectedMonthlyVolume: {
            amount: volume,
            currency: text('expectedMonthlyVolume.currency').toUpperCase(),
          },
        }
      : {}),
    owners: owners.map((i) => ({
      name: text(`owners.${i}.name`),
      dateOfBirth: text(`owners.${i}.dateOfBirth`),
      nationality: text(`owners.${i}.nationality`).toUpperCase(),
      countryOfResidence: text(`owners.${i}.countryOfResidence`).toUpperCase(),
      ownershipPercent:
        text(`owners.${i}.ownershipPercent`) === ''
          ? Number.NaN
          : Number(text(`owners.${i}.ownershipPercent`)),
    })),
    directors: directors.map((i) => ({
      name: text(`directors.${i}.name`),
      dateOfBirth: text(`directors.${i}.dateOfBirth`),
      nationality: text(`directors.${i}.nationality`).toUpperCase(),
    })),
  };
  return { body, rows: { owners, directors } };
}

/** Each refusal by the field it names on the form (an owner's by the row it came from) */
function errorsOf(error: z.ZodError, rows: { owners: number[]; directors: number[] }): Errors {
  const errors: Errors = new Map();
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    const [head, index] = path;
    if ((head === 'owners' || head === 'directors') && index !== undefined && /^\d+$/.test(index))
      path[1] = String(rows[head][Number(index)] ?? index);
    // A list's own refusal (no director, more than 100 %) is shown at its first row's first field
    const name =
      path.length === 1 && (head === 'owners' || head === 'directors') ? `${head}.0.name` : path.join('.');
    // An empty required field says so, not what the schema counts
    const empty = issue.code === 'too_small' && issue.origin === 'string' && Number(issue.minimum) === 1;
    if (!errors.has(name)) errors.set(name, empty ? 'required' : issue.message);
  }
  return errors;
}

/** Not found as undefined (a closed link, no profile yet); anything else stays the error it is */
const unlessNotFound = (err: unknown): undefined => {
  if (asDomainError(err).status === 404) return undefined;
  throw err;
};

export async function registerOnboardingPageRoutes(
  app: FastifyInstance,
  deps: { db: Db; invitations: OnboardingInvitations; profiles: BusinessProfiles },
): Promise<void> {
  const { db, invitations, profiles } = deps;
  const gone = (reply: FastifyReply) =>
    sendPage(
      reply.code(404),
      noticePage(
        'This link does not open',
        'It has expired, been used, or been replaced by a newer invitation. Ask whoever invited you for a new one.',
        'en',
      ),
    );

  app.get<{ Params: { token: string } }>('/onboarding/:token', async (request, reply) => {
    const invitation = await invitations.open(db, request.params.token).catch(unlessNotFound);
    if (!invitation) return gone(reply);
    const existing = await profiles.get(db, invitation.tenant).catch(unlessNotFound);
    const rows = Math.max(MIN_DIRECTOR_ROWS, (existing?.profile.directors.length ?? 0) + 1);
    return sendPage(
      reply,
      formPage(
        request.params.token,
        invitation.email,
        invitation.hasAccount,
        formOf(existing?.profile),
        new Map(),
        rows,
      ),
    );
  });

  // Multipart (the page's form with its files) is read in a scope of its own; a form without files
  // (urlencoded) is read as before
  await app.register(async (scope) => {
    await scope.register(multipart, {
      limits: { fileSize: MAX_UPLOAD_BYTES, files: MAX_PAGE_FILES, fields: 200, fieldSize: 400 },
    });
    scope.post<{ Params: { token: string } }>('/onboarding/:token', (request, reply) =>
      finishPage(request, reply),
    );
  });

  async function finishPage(request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) {
    const token = request.params.token;
    const invitation = await invitations.open(db, token).catch(unlessNotFound);
    if (!invitation) return gone(reply);
    const { form, documents, errors: fileErrors } = await readPage(request);
    const directorRows = Math.min(20, Math.max(MIN_DIRECTOR_ROWS, Number(form.directorRows) || 0));
    const again = (errors: Errors) =>
      sendPage(
        reply.code(400),
        formPage(token, invitation.email, invitation.hasAccount, form, errors, directorRows),
      );
    const { body, rows } = bodyOf(form, directorRows);
    const parsed = businessProfileInput.safeParse(body);
    const errors = parsed.success ? new Map<string, string>() : errorsOf(parsed.error, rows);
    for (const [kind, message] of fileErrors) errors.set(kind, message);
    if (!invitation.hasAccount) {
      if ((form.password ?? '').length < MIN_PASSWORD)
        errors.set('password', `at least ${MIN_PASSWORD} characters`);
      else if (form.password !== form.passwordAgain) errors.set('passwordAgain', 'the two passwords differ');
    }
    if (!parsed.success || errors.size > 0) {
      // A file input cannot be filled in again by the page: each file that was fine is asked for again
      for (const { kind } of documents)
        if (!errors.has(kind))
          errors.set(kind, 'choose the file again: nothing is kept until the form is sent');
      return again(errors);
    }
    try {
      await invitations.finish(
        token,
        parsed.data,
        invitation.hasAccount ? undefined : form.password,
        { id: request.id, ip: request.ip },
        documents,
      );
    } catch (err) {
      const error = asDomainError(err);
      if (error.status === 404) return gone(reply);
      if (error.status >= 500) throw err;
      return again(new Map([[error.field ?? 'legalName', error.message]]));
    }
    return sendPage(
      reply,
      page(
        'Sent for review',
        `<h1>Sent for review</h1><p>Thank you. We review what you sent and write to ${escapeHtml(invitation.email)} if we need more.</p><p><a href="/console/sign-in">Sign in to your console</a> as ${escapeHtml(invitation.email)}.</p>`,
      ),
    );
  }
}

/**
 * The posted form: its text fields, and (multipart) its files by document kind, each checked as an
 * upload is — a file refused is an error beside its field, not a refusal of the page. A file input left
 * empty sends a part with no name and no bytes: it is no file.
 */
async function readPage(request: FastifyRequest): Promise<{
  form: Form;
  documents: { kind: DocumentKind; files: UploadedFile[] }[];
  errors: Errors;
}> {
  const form: Form = {};
  const keep = (k: string, v: unknown) => {
    if (typeof v === 'string' && k.length <= 60) form[k] = v.slice(0, 400);
  };
  const errors: Errors = new Map();
  const byKind = new Map<DocumentKind, UploadedFile[]>();
  if (!request.isMultipart()) {
    for (const [k, v] of Object.entries((request.body ?? {}) as Record<string, unknown>)) keep(k, v);
    return { form, documents: [], errors };
  }
  try {
    for await (const part of request.parts()) {
      if (part.type !== 'file') {
        keep(part.fieldname, part.value);
        continue;
      }
      const kind = DOCUMENT_FIELDS.find((d) => d.kind === part.fieldname)?.kind;
      const bytes = await part.toBuffer().catch((err: { code?: string }) => {
        if (err.code === 'FST_REQ_FILE_TOO_LARGE') return undefined;
        throw err;
      });
      if (!kind || (!part.filename && bytes?.length === 0)) continue;
      if (!bytes) {
        errors.set(kind, `${part.filename.slice(0, 200)} is larger than 5 MB`);
        continue;
      }
      try {
        const file = checkedUpload({
          field: kind,
          filename: part.filename,
          bytes,
          truncated: part.file.truncated,
        });
        byKind.set(kind, [...(byKind.get(kind) ?? []), file]);
      } catch (err) {
        errors.set(kind, asDomainError(err).message);
      }
    }
  } catch (err) {
    const error = asDomainError(err);
    if (error.status >= 500) throw err;
    // More files than the page takes: said beside the first document field
    errors.set(DOCUMENT_FIELDS[0]?.kind ?? 'documents', `at most ${MAX_PAGE_FILES} files`);
  }
  return { form, documents: [...byKind].map(([kind, files]) => ({ kind, files })), errors };
}
