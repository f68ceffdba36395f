// The hosted onboarding page's form (pages/onboarding-page-routes.ts handles it): the business, its
// address, owners and directors, the documents, and the console account's password — each field with its
// label, hint and refusal beside it (aria-invalid, described by the message), and a summary of what needs
// a change linking to each field.
import type { BusinessProfile } from '../platform/compliance/business-profile.ts';
import type { DocumentKind } from '../platform/compliance/profile-documents.ts';
import { escapeHtml, page } from '../platform/pages/html.ts';

export const OWNER_ROWS = 4;
export const MIN_DIRECTOR_ROWS = 3;
export const MIN_PASSWORD = 12;

export type Form = Record<string, string>;
export type Errors = Map<string, string>;

/** The documents the page asks for, each its own file field named by its kind */
export const DOCUMENT_FIELDS: readonly { kind: DocumentKind; label: string; hint: string }[] = [
  {
    kind: 'registration_extract',
    label: 'Extract from the company register',
    hint: 'Not older than three months',
  },
  { kind: 'proof_of_address', label: 'Proof of the registered address', hint: 'A utility bill or a lease' },
  {
    kind: 'ownership_structure',
    label: 'Ownership structure',
    hint: 'Who owns the business, up to the people',
  },
  {
    kind: 'identity_document',
    label: 'Identity documents of the owners and directors',
    hint: 'Passport or ID card, one file each',
  },
];
export const MAX_PAGE_FILES = 10;

interface FieldSpec {
  name: string;
  label: string;
  type?: 'text' | 'date' | 'url' | 'number' | 'password';
  hint?: string;
  autocomplete?: string;
  required?: boolean;
}

/** The form's fields for a profile, named by their path in the admin API's body (`owners.0.name`) */
export function formOf(profile: BusinessProfile | undefined): Form {
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

function field(spec: FieldSpec, form: Form, errors: Errors): string {
  const id = `f-${spec.name.replace(/\./g, '-')}`;
  const error = errors.get(spec.name);
  const described = [spec.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return `<label for="${id}">${escapeHtml(spec.label)}${spec.required ? '' : ' <small>(optional)</small>'}</label>
${spec.hint ? `<small id="${id}-hint">${escapeHtml(spec.hint)}</small>` : ''}
${error ? `<small class="field-error" id="${id}-error">${escapeHtml(error)}</small>` : ''}
<input id="${id}" name="${escapeHtml(spec.name)}" type="${spec.type ?? 'text'}"${spec.type === 'password' ? '' : ` value="${escapeHtml(form[spec.name] ?? '')}"`}${spec.autocomplete ? ` autocomplete="${spec.autocomplete}"` : ''}${spec.required ? ' required' : ''}${error ? ' aria-invalid="true"' : ''}${described ? ` aria-describedby="${described}"` : ''}>`;
}

function fileField(
  d: (typeof DOCUMENT_FIELDS)[number],
  errors: Errors,
  named: (label: string) => void,
): string {
  named(d.label);
  const id = `f-${d.kind}`;
  const error = errors.get(d.kind);
  return `<label for="${id}">${escapeHtml(d.label)} <small>(optional)</small></label>
<small id="${id}-hint">${escapeHtml(d.hint)}</small>
${error ? `<small class="field-error" id="${id}-error">${escapeHtml(error)}</small>` : ''}
<input id="${id}" name="${d.kind}" type="file" multiple accept=".pdf,.png,.jpg,.jpeg,application/pdf,image/png,image/jpeg" aria-describedby="${id}-hint${error ? ` ${id}-error` : ''}"${error ? ' aria-invalid="true"' : ''}>`;
}

export function formPage(
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
  const body = `<form method="post" action="/onboarding/${escapeHtml(token)}" enctype="multipart/form-data" novalidate>
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
<h2>Documents</h2><p>PDF, PNG or JPEG files of at most 5 MB each, ${MAX_PAGE_FILES} at most. You can also send them later, when asked.</p>
${DOCUMENT_FIELDS.map((d) => fileField(d, errors, (label) => labels.set(d.kind, label))).join('\n')}
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
