// A payments customer beside its id (docs/console.md, Names beside ids): its name and email to a role that
// may read personal data, the id after them; to any other role, the id said as what it is.
import { link } from '../../platform/console/console-layout.ts';
import type { Viewer } from '../../platform/console/console-users.ts';
import { type Html, h } from '../../platform/console/html-template.ts';
import { allows } from '../../platform/console/permissions.ts';

export function customerLink(
  row: { customer_id: number; customer_name: string | null; customer_email: string | null },
  viewer: Viewer,
): Html {
  const href = `/console/payments/customers/${row.customer_id}`;
  const words = allows(viewer.access, 'personal')
    ? [row.customer_name, row.customer_email].filter(Boolean).join(' · ')
    : '';
  return words
    ? h`${link(href, words)} <small class="id">${row.customer_id}</small>`
    : link(href, `Customer ${row.customer_id}`);
}
