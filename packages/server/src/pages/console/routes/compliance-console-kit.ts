// What the console's compliance pages share (docs/compliance.md, Console): their tabs, who acted as the
// cases and profiles record it, and the text a reason or a note may be.
import { z } from 'zod';
import type { Viewer } from '../../../platform/console/console-users.ts';
import { type Html, h } from '../../../platform/console/html-template.ts';

const TABS = [
  ['cases', 'Cases'],
  ['screening', 'Screening'],
  ['monitoring', 'Monitoring'],
  ['onboarding', 'Onboarding'],
] as const;
export type ComplianceTab = (typeof TABS)[number][0];

export const complianceTabs = (current: ComplianceTab): Html =>
  h`<nav class="inline tabs" aria-label="Compliance">${TABS.map(
    ([tab, label]) =>
      h`<a href="/console/compliance/${tab}"${tab === current ? h` aria-current="page"` : ''}>${label}</a> `,
  )}</nav>`;

/** Who a decision, a note or an assignment is recorded as: the person's email ('admin token' for its sessions) */
export const actorOf = (viewer: Viewer): string => (viewer.userId ? viewer.email : 'admin token');

/** A reason or a note: what the admin API takes too */
export const complianceText = (max: number) =>
  z.string().trim().min(1, 'write something').max(max, `at most ${max} characters`);
