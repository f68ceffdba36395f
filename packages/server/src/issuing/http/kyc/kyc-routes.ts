// /kyc routes (docs/issuing.md, KYC), all as the calling customer (bearer access token).
import { z } from 'zod';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import type { KycService, KycView } from '../../kyc/kyc-service.ts';
import { KYC_STEPS, type KycStep, STEP_NAMES } from '../../kyc/kyc-steps.ts';
import { type Authenticators, requireCustomer } from '../authenticate.ts';
import { errors } from '../schemas.ts';

const verificationStatus = z.enum(['not_started', 'started', 'verified', 'rejected']);
export const kycView = z.object({
  customerId: z.string(),
  status: z.enum(['not_started', 'in_progress', 'pending_review', 'approved', 'rejected']),
  rejectReason: z.string().nullable(),
  completedSteps: z.array(z.string()),
  missingSteps: z.array(z.string()),
  verifications: z.object({ identity: verificationStatus, proofOfAddress: verificationStatus }),
  updatedAt: z.iso.datetime().nullable(),
});

export const presentKyc = (view: KycView) => ({ ...view, updatedAt: view.updatedAt?.toISOString() ?? null });

export async function registerKycRoutes(app: ZodApp, kyc: KycService, authn: Authenticators): Promise<void> {
  const security = [{ customerToken: [] }];

  app.get(
    '/kyc',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'KYC status and the steps still missing',
        tags: ['kyc'],
        security,
        response: { 200: kycView, ...errors(401) },
      },
    },
    async (request) => presentKyc(await kyc.get(requireCustomer(request))),
  );

  for (const step of STEP_NAMES) {
    app.post(
      `/kyc/${step}`,
      {
        onRequest: authn.customer,
        schema: {
          summary: `Store the ${step} step`,
          tags: ['kyc'],
          security,
          body: KYC_STEPS[step],
          response: { 200: kycView, ...errors(400, 401, 409) },
        },
      },
      async (request) =>
        presentKyc(
          await kyc.saveStep(
            requireCustomer(request),
            step as KycStep,
            request.body as Record<string, unknown>,
          ),
        ),
    );
  }

  const started = z.object({
    verificationId: z.string(),
    kind: z.enum(['identity', 'proof_of_address']),
    status: z.literal('started'),
    url: z.string(),
    expiresAt: z.iso.datetime(),
  });
  for (const [path, kind] of [
    ['/kyc/id-verification/start', 'identity'],
    ['/kyc/poa-verification/start', 'proof_of_address'],
  ] as const) {
    app.post(
      path,
      {
        onRequest: authn.customer,
        schema: {
          summary: `Start the hosted ${kind === 'identity' ? 'identity' : 'proof-of-address'} check; answers the page URL`,
          tags: ['kyc'],
          security,
          response: { 201: started, ...errors(401, 409) },
        },
      },
      async (request, reply) => {
        const result = await kyc.startVerification(requireCustomer(request), kind);
        return reply.code(201).send({ ...result, expiresAt: result.expiresAt.toISOString() });
      },
    );
  }
}
