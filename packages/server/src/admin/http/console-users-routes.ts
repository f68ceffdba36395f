// /admin/console-users: the operator decides who signs in to the console and with which role — an
// operator (`operator`, `operator-viewer`: every tenant) or a member of one partner, merchant or store
// (`viewer`, `developer`, `finance`, `admin`; docs/console.md, Roles). A password left out is generated
// and answered once.
import { z } from 'zod';
import { CONSOLE_ROLES, type ConsoleUser, type ConsoleUsers } from '../../platform/console/console-users.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { idParam, standardErrors, timestamp } from './schemas.ts';

const userView = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(CONSOLE_ROLES),
  tenant: z.object({ kind: z.enum(['partner', 'merchant', 'store']), id: z.string() }).nullable(),
  twoFactor: z.boolean(),
  lockedUntil: timestamp.nullable(),
  createdAt: timestamp,
});

const present = (u: ConsoleUser) => ({
  ...u,
  lockedUntil: u.lockedUntil?.toISOString() ?? null,
  createdAt: u.createdAt.toISOString(),
});

export async function registerConsoleUserRoutes(app: ZodApp, users: ConsoleUsers): Promise<void> {
  app.post(
    '/console-users',
    {
      schema: {
        summary: 'Let a person sign in to the console; a generated password is shown only in this answer',
        tags: ['console users'],
        body: z
          .object({
            email: z.string().trim().min(3).max(254),
            password: z.string().min(12).max(200).optional(),
            role: z
              .enum([...CONSOLE_ROLES, 'member'])
              .describe(
                'operator and operator-viewer see every tenant; the others belong to one (member: admin)',
              ),
            tenant: z
              .object({
                kind: z.enum(['partner', 'merchant', 'store']),
                id: z.string().trim().min(1).max(100),
              })
              .optional(),
          })
          // A member of one tenant (an operator has none): the schema alone cannot say which goes with which.
          .meta({
            example: { email: 'ada@example.com', role: 'finance', tenant: { kind: 'merchant', id: '1001' } },
          }),
        response: { 201: userView.extend({ password: z.string().optional() }), ...standardErrors },
      },
    },
    async (request, reply) => {
      const { user, password } = await users.create(request.body);
      return reply.code(201).send({ ...present(user), ...(password ? { password } : {}) });
    },
  );

  app.get(
    '/console-users',
    {
      schema: {
        summary: 'List console users',
        tags: ['console users'],
        response: { 200: z.object({ data: z.array(userView) }), ...standardErrors },
      },
    },
    async () => ({ data: (await users.list()).map(present) }),
  );

  app.put(
    '/console-users/:id/role',
    {
      schema: {
        summary: 'Give a console user another role of their kind; their open sessions take it at once',
        tags: ['console users'],
        params: idParam,
        body: z.object({ role: z.enum(CONSOLE_ROLES) }).meta({ example: { role: 'viewer' } }),
        response: { 200: userView, ...standardErrors },
      },
    },
    async (request) => present(await users.setRole(request.params.id, request.body.role)),
  );

  app.delete(
    '/console-users/:id',
    {
      schema: {
        summary: 'Remove a console user; their sessions end at once',
        tags: ['console users'],
        params: idParam,
        response: { 204: z.null(), ...standardErrors },
      },
    },
    async (request, reply) => {
      await users.remove(request.params.id);
      return reply.code(204).send(null);
    },
  );
}
