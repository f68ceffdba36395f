// Console › Members (docs/console.md, Roles): a tenant's admins add their people, change their roles and
// remove them; operators do the same for the operator's own team. Nobody changes their own role or
// removes themselves (another admin does), so a team always keeps the person managing it. A new person's
// password is generated and shown once; the same service as the admin API checks every field.

import type { FastifyInstance } from 'fastify';
import { noteAuditObject } from '../../../platform/audit/audit-actions.ts';
import { sendConsolePage } from '../../../platform/console/console-http.ts';
import { doneNotice, link, listView } from '../../../platform/console/console-layout.ts';
import {
  type ConsoleRole,
  type ConsoleUser,
  OPERATOR_ROLES,
  type Viewer,
} from '../../../platform/console/console-users.ts';
import { h } from '../../../platform/console/html-template.ts';
import { confirmedAction, textQuery, viewerOf } from '../../../platform/console/route-kit.ts';
import { when } from '../../../platform/console/values.ts';
import { DomainError, notFound } from '../../../platform/errors/domain-error.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';

const MEMBER_ROLES: readonly ConsoleRole[] = ['viewer', 'developer', 'finance', 'admin'];

/** The viewer's team: their tenant's people, or the operators. */
const teamOf = (viewer: Viewer) => (viewer.role === 'member' ? viewer.tenant : null);
const rolesFor = (viewer: Viewer) => (viewer.role === 'member' ? MEMBER_ROLES : OPERATOR_ROLES);

export async function registerMembersConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const users = deps.services.consoleUsers;

  /** A person of the viewer's team, other than the viewer; someone else's is not found. */
  const teammate = async (viewer: Viewer, id: string, changing: boolean): Promise<ConsoleUser> => {
    const user = await users.user(id).catch(() => undefined);
    const team = teamOf(viewer);
    const same = team
      ? user?.tenant?.kind === team.kind && user.tenant.id === team.id
      : user !== undefined && OPERATOR_ROLES.includes(user.role);
    if (!user || !same) throw notFound('member');
    if (changing && user.id === viewer.userId) {
      throw new DomainError(
        'invalid_state',
        'you cannot change your own role or remove yourself: another admin does',
      );
    }
    return user;
  };

  app.get('/members', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const people = await users.listOf(teamOf(viewer));
    const content = h`${doneNotice(textQuery(request).done)}<p>${link('/console/members/new', 'Add a person…')}</p>${listView(
      {
        caption: teamOf(viewer)
          ? 'The people of your team and their roles'
          : 'The operator’s people and their roles',
        rows: people,
        columns: [
          { label: 'Email', cell: (u) => u.email },
          { label: 'Role', cell: (u) => u.role },
          { label: 'Two-factor', cell: (u) => (u.twoFactor ? 'on' : 'off') },
          { label: 'Added', cell: (u) => when(u.createdAt) },
          {
            label: 'Change',
            cell: (u) =>
              u.id === viewer.userId
                ? 'you'
                : h`${link(`/console/members/${u.id}/role`, 'Role…')} ${link(`/console/members/${u.id}/remove`, 'Remove…')}`,
          },
        ],
      },
    )}`;
    return sendConsolePage(request, reply, deps, 'Members', content);
  });

  const add = confirmedAction<Record<string, never>>(
    deps,
    async (request) => ({
      title: 'Add a person',
      explain: h`<p>They sign in with their email and the password shown once after this; they can add a second factor themselves.</p>`,
      fields: [
        { name: 'email', label: 'Email', type: 'email', required: true, autocomplete: 'off' },
        { name: 'role', label: 'Role', options: rolesFor(viewerOf(request, deps)), value: 'viewer' },
      ],
      submit: 'Add',
    }),
    async (request, _params, body) => {
      const viewer = viewerOf(request, deps);
      const role = body.role as ConsoleRole;
      if (!rolesFor(viewer).includes(role)) {
        throw new DomainError('validation_failed', `role must be one of ${rolesFor(viewer).join(', ')}`, {
          field: 'role',
        });
      }
      const team = teamOf(viewer);
      const { user, password } = await users.create({
        email: body.email ?? '',
        role,
        ...(team ? { tenant: team } : {}),
      });
      noteAuditObject(request, user.id);
      return {
        title: 'Person added',
        content: h`<p>${user.email} can sign in now as ${user.role}, with this password. Copy it now: it is not shown again.</p>
<p class="secret" data-field="password">${password ?? ''}</p><p>${link('/console/members?done=saved', 'Back to the members')}</p>`,
      };
    },
  );
  app.get('/members/new', add.get);
  app.post('/members/new', add.post);

  const changeRole = confirmedAction<{ id: string }>(
    deps,
    async (request, params) => {
      const viewer = viewerOf(request, deps);
      const user = await teammate(viewer, params.id, false);
      return {
        title: `Role of ${user.email}`,
        explain: h`<p>${user.email} is ${user.role}. Their open sessions take the new role at their next request.</p>`,
        fields: [{ name: 'role', label: 'Role', options: rolesFor(viewer), value: user.role }],
        submit: 'Change the role',
      };
    },
    async (request, params, body) => {
      const viewer = viewerOf(request, deps);
      const user = await teammate(viewer, params.id, true);
      if (!rolesFor(viewer).includes(body.role as ConsoleRole)) {
        throw new DomainError('validation_failed', `role must be one of ${rolesFor(viewer).join(', ')}`, {
          field: 'role',
        });
      }
      await users.setRole(user.id, body.role as ConsoleRole);
      return '/console/members?done=saved';
    },
  );
  app.get('/members/:id/role', changeRole.get);
  app.post('/members/:id/role', changeRole.post);

  const remove = confirmedAction<{ id: string }>(
    deps,
    async (request, params) => {
      const user = await teammate(viewerOf(request, deps), params.id, false);
      return {
        title: `Remove ${user.email}`,
        explain: h`<p>${user.email} can no longer sign in; their open sessions end at once.</p>`,
        fields: [],
        submit: 'Remove',
        danger: true,
      };
    },
    async (request, params) => {
      const user = await teammate(viewerOf(request, deps), params.id, true);
      await users.remove(user.id);
      return '/console/members?done=removed';
    },
  );
  app.get('/members/:id/remove', remove.get);
  app.post('/members/:id/remove', remove.post);
}
