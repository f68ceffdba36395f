// /customer (spec, Customers): create, list with filters and pagination, retrieve, update, delete.
import { z } from 'zod';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { text } from '../../platform/http/fields.ts';
import { IDENTIFIER_PATTERN } from '../customers/customer-identifier.ts';
import type { Customer, CustomersService } from '../customers/customers-service.ts';
import { type MerchantAuthenticator, merchantOf } from './authenticate.ts';
import { created, envelope, ok, paged, pagedEnvelope, pageOf, standardErrors } from './envelope.ts';
import { countryField, intField, isoDateTime, pageQuery } from './fields.ts';

export const INVALID_EMAIL = 1651;

const customerView = z.object({
  id: z.number().int(),
  siteId: z.number().int(),
  identifier: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  country: z.string().nullable(),
  state: z.string().nullable(),
  city: z.string().nullable(),
  zipCode: z.string().nullable(),
  address: z.string().nullable(),
  phone: z.string().nullable(),
  email: z.string().nullable(),
  creationDate: z.string(),
  creationTimestamp: z.number().int(),
});

const present = ({ createdAt, ...customer }: Customer) => ({
  ...customer,
  creationDate: createdAt.toISOString().replace('Z', '+00:00'),
  creationTimestamp: Math.floor(createdAt.getTime() / 1000),
});

// The rule lives with the customers (checkIdentifier); the schema states it for the documents.
const identifierField = z
  .string()
  .trim()
  .min(1)
  .max(92, 'identifier has at most 92 characters')
  .regex(IDENTIFIER_PATTERN, 'identifier allows letters, digits, -, _, ., @ and space');

const fields = {
  identifier: identifierField,
  email: text(254),
  firstName: text(100),
  lastName: text(100),
  country: z.union([z.literal(''), countryField]),
  state: text(50),
  city: text(100),
  zipCode: text(20),
  address: text(300),
  phone: z.union([
    z.literal(''),
    z
      .string()
      .trim()
      .regex(/^\+?[0-9 ()-]{4,24}$/, 'must be a phone number'),
  ]),
};
const updateBody = z.object(fields).partial();
const createBody = updateBody.extend({ identifier: identifierField, siteId: intField.optional() });

function checkEmail(email: string | undefined): void {
  if (email && !z.email().safeParse(email).success) {
    throw new DomainError('validation_failed', 'email is not a valid address', {
      field: 'email',
      details: { systemCode: INVALID_EMAIL },
    });
  }
}

export async function registerCustomersRoutes(
  app: ZodApp,
  deps: { customers: CustomersService; authenticate: MerchantAuthenticator },
): Promise<void> {
  const { customers } = deps;
  const idParam = z.object({ id: intField });
  const common = { onRequest: deps.authenticate };

  app.post(
    '/customer',
    {
      ...common,
      schema: {
        summary: 'Create a customer',
        tags: ['customers'],
        body: createBody,
        response: { 201: envelope(z.object({ id: z.number().int() })), ...standardErrors },
      },
    },
    async (request, reply) => {
      checkEmail(request.body.email);
      const customer = await customers.create(merchantOf(request), request.body);
      return reply.code(201).send(created({ id: customer.id }));
    },
  );

  app.get(
    '/customer',
    {
      ...common,
      schema: {
        summary: 'List customers (newest first unless reverseSorting=0)',
        tags: ['customers'],
        querystring: z.object({
          country: countryField.optional(),
          email: z.string().max(254).optional(),
          identifier: z.string().max(92).optional(),
          createdAtFrom: isoDateTime.optional(),
          createdAtTo: isoDateTime.optional(),
          ...pageQuery,
        }),
        response: { 200: pagedEnvelope(customerView), ...standardErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = pageOf(q);
      const { items, total } = await customers.list(
        merchantOf(request),
        {
          ...(q.country ? { country: q.country } : {}),
          ...(q.email ? { email: q.email } : {}),
          ...(q.identifier ? { identifier: q.identifier } : {}),
          ...(q.createdAtFrom ? { createdAtFrom: new Date(q.createdAtFrom) } : {}),
          ...(q.createdAtTo ? { createdAtTo: new Date(q.createdAtTo) } : {}),
        },
        page,
      );
      return paged(items.map(present), total, page);
    },
  );

  app.get(
    '/customer/:id',
    {
      ...common,
      schema: {
        summary: 'Retrieve a customer',
        tags: ['customers'],
        params: idParam,
        response: { 200: envelope(customerView), ...standardErrors },
      },
    },
    async (request) => ok(present(await customers.get(merchantOf(request), request.params.id))),
  );

  app.put(
    '/customer/:id',
    {
      ...common,
      schema: {
        summary: 'Update a customer (only the fields sent change)',
        tags: ['customers'],
        params: idParam,
        body: updateBody,
        response: { 200: envelope(z.object({ id: z.number().int() })), ...standardErrors },
      },
    },
    async (request) => {
      checkEmail(request.body.email);
      const customer = await customers.update(merchantOf(request), request.params.id, request.body);
      return ok({ id: customer.id });
    },
  );

  app.delete(
    '/customer/:id',
    {
      ...common,
      schema: {
        summary: 'Delete a customer: cancels its recurring and managed orders and deletes its stored cards',
        tags: ['customers'],
        params: idParam,
        body: z.object({}).passthrough().nullish(),
        response: { 200: z.object({ code: z.number().int(), message: z.string() }), ...standardErrors },
      },
    },
    async (request) => {
      await customers.delete(merchantOf(request), request.params.id);
      return { code: 200, message: 'Success' };
    },
  );
}
