// Spending controls routes (docs/issuing.md, Spending controls; a Tessera extension of the issuing API): a
// partner's for its program, an account or a card (x-partner-api-key); a cardholder's for their own card
// (Bearer). A PUT replaces that scope's controls; an empty body removes them.
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import { ClientAmount, formatAmountIn } from '../../../platform/money/amount.ts';
import {
  CHANNELS,
  CONTROL_SCOPES,
  LIMIT_INTERVALS,
  MCC_ENTRY,
  MCC_GROUPS,
  type SpendingControls,
} from '../../cards/spending-controls.ts';
import type {
  ControlsActor,
  ControlsByScope,
  ControlsCommand,
  SpendingControlsService,
} from '../../cards/spending-controls-service.ts';
import { country } from '../../kyc/kyc-steps.ts';
import { type Authenticators, requireCustomer, requirePartner } from '../authenticate.ts';
import { errors } from '../schemas.ts';

const amount = z.union([z.string().max(40), z.number()]);
const mccEntry = z
  .string()
  .max(40)
  .refine(
    (e) => MCC_ENTRY.test(e) || Object.hasOwn(MCC_GROUPS, e),
    `must be a four-digit code, a range (3000-3299) or a group: ${Object.keys(MCC_GROUPS).join(', ')}`,
  )
  .meta({ example: 'gambling' });
const countryCode = country.meta({ example: 'KP' });
const controlsBody = z.object({
  allowedMccs: z.array(mccEntry).min(1).max(500).optional(),
  blockedMccs: z.array(mccEntry).min(1).max(500).optional(),
  allowedCountries: z.array(countryCode).min(1).max(250).optional(),
  blockedCountries: z.array(countryCode).min(1).max(250).optional(),
  channels: z.strictObject(Object.fromEntries(CHANNELS.map((c) => [c, z.boolean().optional()]))).optional(),
  maxPerAuthorization: amount.meta({ example: '250.00' }).optional(),
  limits: z
    .array(z.object({ amount: amount.meta({ example: '1000.00' }), interval: z.enum(LIMIT_INTERVALS) }))
    .max(LIMIT_INTERVALS.length)
    .refine((ls) => new Set(ls.map((l) => l.interval)).size === ls.length, 'one limit per interval')
    .optional(),
  maxCountPerDay: z.number().int().min(1).max(1_000_000).optional(),
});
type ControlsBody = z.infer<typeof controlsBody>;

const controlsView = z.object({
  allowedMccs: z.array(z.string()).optional(),
  blockedMccs: z.array(z.string()).optional(),
  allowedCountries: z.array(z.string()).optional(),
  blockedCountries: z.array(z.string()).optional(),
  channels: z.record(z.string(), z.boolean()).optional(),
  maxPerAuthorization: z.string().optional(),
  limits: z.array(z.object({ amount: z.string(), interval: z.enum(LIMIT_INTERVALS) })).optional(),
  maxCountPerDay: z.number().int().optional(),
  currency: z.string().optional(),
});
/** The controls in force by scope; a scope without controls is absent */
const controlsByScopeView = z.object(
  Object.fromEntries(CONTROL_SCOPES.map((s) => [s, controlsView.optional()])),
);

/** The wire's body as the service takes it: each amount read, naming its field */
function command(body: ControlsBody | null | undefined, currency?: string): ControlsCommand {
  const { maxPerAuthorization, limits, ...rest } = body ?? {};
  return {
    ...rest,
    ...(currency !== undefined ? { currency: currency.toUpperCase() } : {}),
    ...(maxPerAuthorization !== undefined
      ? { maxPerAuthorization: ClientAmount.read(maxPerAuthorization, 'maxPerAuthorization') }
      : {}),
    ...(limits
      ? {
          limits: limits.map((l, i) => ({
            amount: ClientAmount.read(l.amount, `limits[${i}].amount`),
            interval: l.interval,
          })),
        }
      : {}),
  };
}

function presentControls(c: SpendingControls) {
  const money = (minor: bigint) => (c.currency ? formatAmountIn(minor, c.currency) : minor.toString());
  const { maxPerAuthorization, limits, ...rest } = c;
  return {
    ...rest,
    ...(maxPerAuthorization !== undefined ? { maxPerAuthorization: money(maxPerAuthorization) } : {}),
    ...(limits ? { limits: limits.map((l) => ({ amount: money(l.amount), interval: l.interval })) } : {}),
  };
}

const present = (byScope: ControlsByScope) =>
  Object.fromEntries(Object.entries(byScope).map(([scope, c]) => [scope, presentControls(c)]));

export async function registerSpendingControlsRoutes(
  app: ZodApp,
  controls: SpendingControlsService,
  authn: Authenticators,
): Promise<void> {
  const partnerOnly = [{ partnerApiKey: [] }];
  const tags = ['spending controls'];
  // A card's controls: the partner with its key, or the cardholder with their token.
  const partnerOrCardholder = (request: FastifyRequest) =>
    request.headers['x-partner-api-key'] !== undefined
      ? authn.partnerApiKey(request)
      : authn.customer(request);
  const actorOf = (request: FastifyRequest): ControlsActor => {
    if (request.issuingPartner) return { partnerId: requirePartner(request).id };
    const cardholder = requireCustomer(request);
    return { partnerId: cardholder.partnerId, cardholder };
  };
  const cardParams = z.object({ cardId: z.string().max(64) });
  const accountParams = z.object({ accountId: z.string().max(64) });

  app.get(
    '/cards/:cardId/spending-controls',
    {
      onRequest: partnerOrCardholder,
      schema: {
        summary: 'The spending controls in force for a card, by scope (program, account, card, cardholder)',
        tags,
        security: [{ partnerApiKey: [] }, { customerToken: [] }],
        params: cardParams,
        response: { 200: controlsByScopeView, ...errors(401, 404) },
      },
    },
    async (request) => present(await controls.ofCard(actorOf(request), request.params.cardId)),
  );
  app.put(
    '/cards/:cardId/spending-controls',
    {
      onRequest: partnerOrCardholder,
      schema: {
        summary:
          'Replace a card’s controls: the partner’s (x-partner-api-key) or the cardholder’s own (Bearer)',
        description:
          'Amounts are in the card’s currency, as the issuing API writes them. An authorization must pass every scope’s controls, so a cardholder’s controls can only narrow the partner’s. An empty body removes this scope’s controls. Answers every scope’s controls in force.',
        tags,
        security: [{ partnerApiKey: [] }, { customerToken: [] }],
        params: cardParams,
        body: controlsBody.nullish(),
        response: { 200: controlsByScopeView, ...errors(400, 401, 404) },
      },
    },
    async (request) =>
      present(await controls.setForCard(actorOf(request), request.params.cardId, command(request.body))),
  );

  app.get(
    '/accounts/:accountId/spending-controls',
    {
      onRequest: authn.partnerApiKey,
      schema: {
        summary: 'The spending controls in force for an account’s cards: the program’s and the account’s',
        tags,
        security: partnerOnly,
        params: accountParams,
        response: { 200: controlsByScopeView, ...errors(401, 404) },
      },
    },
    async (request) =>
      present(await controls.ofAccount(requirePartner(request).id, request.params.accountId)),
  );
  app.put(
    '/accounts/:accountId/spending-controls',
    {
      onRequest: authn.partnerApiKey,
      schema: {
        summary: 'Replace an account’s controls: its limits count what all its cards spend together',
        tags,
        security: partnerOnly,
        params: accountParams,
        body: controlsBody.nullish(),
        response: { 200: controlsByScopeView, ...errors(400, 401, 404) },
      },
    },
    async (request) =>
      present(
        await controls.setForAccount(
          requirePartner(request).id,
          request.params.accountId,
          command(request.body),
        ),
      ),
  );

  app.get(
    '/spending-controls',
    {
      onRequest: authn.partnerApiKey,
      schema: {
        summary: 'The program’s spending controls: every card of the partner',
        tags,
        security: partnerOnly,
        response: { 200: controlsByScopeView, ...errors(401) },
      },
    },
    async (request) => present(await controls.ofProgram(requirePartner(request).id)),
  );
  app.put(
    '/spending-controls',
    {
      onRequest: authn.partnerApiKey,
      schema: {
        summary: 'Replace the program’s controls, for every card of the partner',
        description:
          'Amounts need currency, and limit only the cards of that currency; each card’s limits count that card’s spend.',
        tags,
        security: partnerOnly,
        body: controlsBody
          .extend({
            currency: z
              .string()
              .regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code')
              .meta({ example: 'EUR' })
              .optional(),
          })
          .nullish(),
        response: { 200: controlsByScopeView, ...errors(400, 401) },
      },
    },
    async (request) =>
      present(
        await controls.setForProgram(
          requirePartner(request).id,
          command(request.body, request.body?.currency),
        ),
      ),
  );
}
