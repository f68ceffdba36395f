// The hosted onboarding page (docs/compliance.md, Onboarding): `/onboarding/{token}`, the link of an
// invitation. The invited person tells who the business is, where, what it sells and who owns and runs
// it, and chooses the password of their console account; finishing submits the profile for review. The
// link is the only credential (no password until the end), so the form needs no other CSRF token: a page
// that does not know the link cannot post to it. Fields are read through the admin API's own profile
// schema, and each refusal is shown beside the field it names.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { z } from 'zod';
import { type BusinessProfile, businessProfileInput } from '../platform/compliance/business-profile.ts';
import type { BusinessProfiles } from '../platform/compliance/business-profiles.ts';
import type { OnboardingInvitations } from '../platform/compliance/onboarding-invitations.ts';
import type { Db } from '../platform/db/database.ts';
import { asDomainError } from '../platform/http/as-domain-error.ts';
import { escapeHtml, noticePage, page, sendPage } from '../platform/pages/html.ts';

const OWNER_ROWS = 4;
const MIN_DIRECTOR_ROWS = 3;
const MIN_PASSWORD = 12;

type Form = Record<string, string>;
type Errors = Map<string, string>;

interface FieldSpec {
  name: string;
  label: string;
  type?: 'text' | 'date' | 'url' | 'number' | 'password';
  hint?: string;
  autocomplete?: string;
  required?: boolean;
}

/** The form's fields for a profile, named by their path in the admin API's body (`owners.0.name`) */
function formOf(profile: BusinessProfile | undefined): Form {
  const form: Form = {};
  const put = (path: string, value: unknown) => {
    if (value !== undefined && value !== null) form[path] = String(value);
  };
  if (!profile) return form;
  for (const key of ['legalName', 'tradingName', 'registrationNumber', 'country', 'mcc', 'website'] as const)
    put(key, profile[key]);
  for (const [k, v] of Object.entries(profile.address)) put(`address.${k}`, v);
  put('expectedMonthlyVolume.amount', profile.expectedMonthlyVolume?.amount);
  put('expectedMonthlyVolume.currency', profile.expectedMonthlyVolume?.currency);
  profile.owners.forEach((o, i) => {
    for (const [k, v] of Object.entries(o)) put(`owners.${i}.${k}`, v);
  });
  profile.directors.forEach((d, i) => {
    for (const [k, v] of Object.entries(d)) put(`directors.${i}.${k}`, v);
  });
  return form;
}

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

function field(spec: FieldSpec, form: Form, errors: Errors): string {
  const id = `f-${spec.name.replace(/\./g, '-')}`;
  const error = errors.get(spec.name);
  const described = [spec.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return `<label for="${id}">${escapeHtml(spec.label)}${spec.required ? '' : ' <small>(optional)</small>'}</label>
${spec.hint ? `<small id="${id}-hint">${escapeHtml(spec.hint)}</small>` : ''}
${error ? `<small class="field-error" id="${id}-error">${escapeHtml(error)}</small>` : ''}
<input id="${id}" name="${escapeHtml(spec.name)}" type="${spec.type ?? 'text'}"${spec.type === 'password' ? '' : ` value="${escapeHtml(form[spec.name] ?? '')}"`}${spec.autocomplete ? ` autocomplete="${spec.autocomplete}"` : ''}${spec.required ? ' required' : ''}${error ? ' aria-invalid="true"' : ''}${described ? ` aria-describedby="${described}"` : ''}>`;
}

function formPage(
  token: string,
  email: string,
  hasAccount: boolean,
  form: Form,
  errors: Errors,
  directorRows: number,
): string {
  // Each field's label, to name it in the summary of what needs a change (an owner's with its row)
  const labels = new Map<string, string>();
  const f = (spec: FieldSpec, group?: string) => {
    labels.set(spec.name, group ? `${group}, ${spec.label.toLowerCase()}` : spec.label);
    return field(spec, form, errors);
  };
  const country = (name: string, label: string, required = true, group?: string) =>
    f({ name, label, hint: 'Two letters (ISO 3166), e.g. DE', autocomplete: 'off', required }, group);
  const owners = Array.from(
    { length: OWNER_ROWS },
    (_, i) =>
      `<fieldset><legend>Owner ${i + 1}</legend>
${f({ name: `owners.${i}.name`, label: 'Full name' }, `Owner ${i + 1}`)}
${f({ name: `owners.${i}.dateOfBirth`, label: 'Date of birth', type: 'date' }, `Owner ${i + 1}`)}
${country(`owners.${i}.nationality`, 'Nationality', false, `Owner ${i + 1}`)}
${country(`owners.${i}.countryOfResidence`, 'Country of residence', false, `Owner ${i + 1}`)}
${f({ name: `owners.${i}.ownershipPercent`, label: 'Share held (%)', type: 'number' }, `Owner ${i + 1}`)}
</fieldset>`,
  ).join('\n');
  const directors = Array.from(
    { length: directorRows },
    (_, i) =>
      `<fieldset><legend>Director ${i + 1}</legend>
${f({ name: `directors.${i}.name`, label: 'Full name', required: i === 0 }, `Director ${i + 1}`)}
${f({ name: `directors.${i}.dateOfBirth`, label: 'Date of birth', type: 'date', required: i === 0 }, `Director ${i + 1}`)}
${country(`directors.${i}.nationality`, 'Nationality', i === 0, `Director ${i + 1}`)}
</fieldset>`,
  ).join('\n');
  const account = hasAccount
    ? `<p>You have a console account as ${escapeHtml(email)}: sign in with it once this is sent.</p>`
    : `<h2>Your console account</h2><p>You sign in as ${escapeHtml(email)}.</p>
${f({ name: 'password', label: 'Choose a password', type: 'password', hint: `At least ${MIN_PASSWORD} characters`, autocomplete: 'new-password', required: true })}
${f({ name: 'passwordAgain', label: 'The password again', type: 'password', autocomplete: 'new-password', required: true })}`;
  const summary = () =>
    errors.size > 0
      ? `<div class="notice error" role="alert"><p>Some answers need a change:</p><ul>${[...errors]
          .map(
            ([name, message]) =>
              `<li><a href="#f-${escapeHtml(name.replace(/\./g, '-'))}">${escapeHtml(labels.get(name) ?? name)}: ${escapeHtml(message)}</a></li>`,
          )
          .join('')}</ul></div>`
      : '';
  const body = `<form method="post" action="/onboarding/${escapeHtml(token)}" novalidate>
<h2>The business</h2>
${f({ name: 'legalName', label: 'Legal name', autocomplete: 'organization', required: true })}
${f({ name: 'tradingName', label: 'Trading name' })}
${f({ name: 'registrationNumber', label: 'Registration number', required: true })}
${country('country', 'Country of registration')}
${f({ name: 'mcc', label: 'Merchant category code', hint: 'Four digits, e.g. 5732 for electronics', required: true })}
${f({ name: 'website', label: 'Website', type: 'url', autocomplete: 'url' })}
${f({ name: 'expectedMonthlyVolume.amount', label: 'Expected monthly volume', hint: 'A decimal amount, e.g. 25000.00' })}
${f({ name: 'expectedMonthlyVolume.currency', label: 'Its currency', hint: 'Three letters, e.g. EUR' })}
<h2>Registered address</h2>
${f({ name: 'address.line1', label: 'Street and number', autocomplete: 'address-line1', required: true })}
${f({ name: 'address.line2', label: 'More of the address', autocomplete: 'address-line2' })}
${f({ name: 'address.postalCode', label: 'Postal code', autocomplete: 'postal-code', required: true })}
${f({ name: 'address.city', label: 'City', autocomplete: 'address-level2', required: true })}
${country('address.country', 'Country')}
<h2>Owners</h2><p>Everyone who holds 25 % or more, directly or not. Leave the rest empty.</p>
${owners}
<h2>Directors</h2><p>At least one.</p>
${directors}
<input type="hidden" name="directorRows" value="${directorRows}">
${account}
<button type="submit">Send for review</button>
</form>`;
  return page(
    'Tell us about your business',
    `<div class="onboarding"><h1>Tell us about your business</h1>
<p>We are required to know who we work with: the business, where it is, and the people who own 25 % or more of it or run it. We check these names against the sanctions lists. Your answers are reviewed before payouts start.</p>
${summary()}
${body}</div>`,
  );
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

  app.post<{ Params: { token: string } }>('/onboarding/:token', async (request, reply) => {
    const token = request.params.token;
    const invitation = await invitations.open(db, token).catch(unlessNotFound);
    if (!invitation) return gone(reply);
    const form: Form = {};
    for (const [k, v] of Object.entries((request.body ?? {}) as Record<string, unknown>))
      if (typeof v === 'string' && k.length <= 60) form[k] = v.slice(0, 400);
    const directorRows = Math.min(20, Math.max(MIN_DIRECTOR_ROWS, Number(form.directorRows) || 0));
    const again = (errors: Errors) =>
      sendPage(
        reply.code(400),
        formPage(token, invitation.email, invitation.hasAccount, form, errors, directorRows),
      );
    const { body, rows } = bodyOf(form, directorRows);
    const parsed = businessProfileInput.safeParse(body);
    const errors = parsed.success ? new Map<string, string>() : errorsOf(parsed.error, rows);
    if (!invitation.hasAccount) {
      if ((form.password ?? '').length < MIN_PASSWORD)
        errors.set('password', `at least ${MIN_PASSWORD} characters`);
      else if (form.password !== form.passwordAgain) errors.set('passwordAgain', 'the two passwords differ');
    }
    if (!parsed.success || errors.size > 0) return again(errors);
    try {
      await invitations.finish(token, parsed.data, invitation.hasAccount ? undefined : form.password, {
        id: request.id,
        ip: request.ip,
      });
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
  });
}
