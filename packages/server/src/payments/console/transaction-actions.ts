// A payments transaction's actions in the console — capture, void and refund, each confirmed first — and
// what its page and its order's page offer of them; the card a deposit was paid with, as a panel. The
// actions call the payments services the API calls, with the merchant's scope, so validation, ledger
// postings and IPNs are the same; a refund above the merchant's threshold waits for a second person.
import type { FastifyInstance } from 'fastify';
import type { ObjectAction } from '../../platform/console/console-layout.ts';
import { details } from '../../platform/console/console-layout.ts';
import type { Viewer } from '../../platform/console/console-users.ts';
import { h } from '../../platform/console/html-template.ts';
import { allows } from '../../platform/console/permissions.ts';
import { confirmedAction, viewerOf } from '../../platform/console/route-kit.ts';
import { money } from '../../platform/console/values.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { ClientAmount, formatAmountIn, parseAmountField } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { StoredCardsService } from '../cards/stored-cards-service.ts';
import { loadMerchantScope } from '../sites.ts';
import type { PaymentsConsoleDeps } from './console-deps.ts';
import { getTransaction, type TransactionRow } from './payments-reads.ts';

type IdParams = { id: string };

/** What can be done to a transaction now: capture or void an authorization, refund what is captured */
export function transactionActions(
  t: Pick<TransactionRow, 'id' | 'type' | 'status' | 'captured_amount' | 'refunded_amount'>,
): ObjectAction[] {
  if (t.type !== 'deposit') return [];
  const href = (kind: string) => `/console/payments/transactions/${t.id}/${kind}`;
  const route = (kind: string) => `/payments/transactions/:id/${kind}`;
  if (t.status === 'in-progress') {
    return [
      { href: href('capture'), label: 'Capture…', route: route('capture') },
      { href: href('void'), label: 'Void…', route: route('void') },
    ];
  }
  const refundable =
    (t.status === 'complete-ok' || t.status === 'refund-ok') &&
    BigInt(t.captured_amount) > BigInt(t.refunded_amount);
  return refundable ? [{ href: href('refund'), label: 'Refund…', route: route('refund') }] : [];
}

/**
 * The card a deposit was paid with: brand, the BIN table's funding, level, country and bank, the masked
 * number and expiry, and whether 3-D Secure authenticated it; the holder's name to a role that may read
 * personal data.
 */
export function cardPanel(
  t: Pick<
    TransactionRow,
    'card_bin' | 'card_brand' | 'card_last4' | 'card_expiry' | 'card_holder_name' | 'is_3d' | 'method'
  >,
  viewer: Viewer,
  cards: Pick<StoredCardsService, 'binOf'>,
) {
  if (!t.card_bin) return '';
  const bin = cards.binOf(t.card_bin);
  return h`<h2>${t.method === 'wallet' ? 'Wallet card' : 'Card'}</h2>${details([
    ['Number', `${t.card_brand ?? bin.brand} ${t.card_bin}•• •••• ${t.card_last4 ?? ''}`],
    ['Funding', `${bin.type.toLowerCase()} · ${bin.level.toLowerCase()}`],
    ['Issued in', `${bin.countryCode} by ${bin.bank}`],
    ['Expiry', t.card_expiry],
    ['Holder', allows(viewer.access, 'personal') ? t.card_holder_name : 'hidden from your role'],
    ['3-D Secure', t.is_3d ? 'authenticated by the cardholder' : 'not used'],
  ])}`;
}

export function registerTransactionActions(app: FastifyInstance, deps: PaymentsConsoleDeps): void {
  const { db } = deps.services;
  const { eyes } = deps;
  const payments = deps.services.payments;
  const transactionAction = (kind: 'capture' | 'refund' | 'void') =>
    confirmedAction<IdParams>(
      deps,
      async (request, params) => {
        const t = await getTransaction(db, viewerOf(request, deps), params.id);
        const left = BigInt(t.captured_amount) - BigInt(t.refunded_amount);
        if (kind === 'capture') {
          return {
            title: `Capture transaction ${t.id}`,
            explain: h`<p>Captures up to the authorized ${money(t.amount, t.currency)}; what is not captured is released.</p>`,
            fields: [
              {
                name: 'amount',
                label: `Amount (${t.currency})`,
                value: formatAmountIn(BigInt(t.amount), t.currency),
                required: true,
                inputmode: 'decimal',
              },
            ],
            submit: 'Capture',
          };
        }
        if (kind === 'void') {
          return {
            title: `Void transaction ${t.id}`,
            explain: h`<p>Releases the authorization of ${money(t.amount, t.currency)}: nothing will be charged.</p>`,
            fields: [{ name: 'reason', label: 'Reason (optional)' }],
            submit: 'Void the authorization',
            danger: true,
          };
        }
        return {
          title: `Refund transaction ${t.id}`,
          explain: h`<p>${money(left, t.currency)} of ${money(t.captured_amount, t.currency)} can still be refunded. The money goes
back to the buyer’s card and the site’s balance is debited.</p>`,
          fields: [
            {
              name: 'amount',
              label: `Amount (${t.currency})`,
              value: formatAmountIn(left, t.currency),
              required: true,
              inputmode: 'decimal',
            },
            { name: 'reason', label: 'Reason (optional)' },
          ],
          submit: 'Refund',
          danger: true,
        };
      },
      async (request, params, body) => {
        const viewer = viewerOf(request, deps);
        const t = await getTransaction(db, viewer, params.id);
        const merchant = await loadMerchantScope(db, t.merchant_id);
        const base = `/console/payments/transactions/${t.id}`;
        if (kind === 'capture') {
          await payments.transactions.capture(merchant, t.id, ClientAmount.read(body.amount ?? ''));
          return `${base}?done=captured`;
        }
        if (kind === 'void') {
          if (t.status !== 'in-progress')
            throw new DomainError('invalid_state', `a ${t.status} transaction cannot be voided`);
          await payments.transactions.refund(merchant, t.id, {
            ...(body.reason ? { reason: body.reason } : {}),
          });
          return `${base}?done=voided`;
        }
        if (t.status === 'in-progress') {
          throw new DomainError('invalid_state', 'an authorization not captured yet is voided, not refunded');
        }
        // Above the merchant's threshold the refund waits for a second person (approvals-routes.ts).
        const asked = {
          merchantId: String(t.merchant_id),
          transactionId: String(t.id),
          amount: body.amount ?? '',
        };
        const asset = findAsset(t.currency);
        if (!asset)
          throw new DomainError('invalid_state', `${t.currency} is not a currency this build knows`);
        const amount = parseAmountField(body.amount ?? '', asset);
        const done = await eyes.runOrAsk(request, {
          tenant: { kind: 'merchant', id: String(t.merchant_id) },
          action: 'refund',
          objectId: String(t.id),
          money: { currency: t.currency, amount },
          summary: `refund ${money(amount, t.currency)} of transaction ${t.id}${body.reason ? ` (${body.reason})` : ''}`,
          payload: { ...asked, ...(body.reason ? { reason: body.reason } : {}) },
        });
        return done.asked ? done.href : `${done.href}?done=refunded`;
      },
    );
  for (const kind of ['capture', 'refund', 'void'] as const) {
    const action = transactionAction(kind);
    app.get(`/payments/transactions/:id/${kind}`, action.get);
    app.post(`/payments/transactions/:id/${kind}`, action.post);
  }
}
