// Cards and compliance holds (docs/compliance.md, Holds): a case that holds a cardholder suspends every card
// of theirs and gives each back, when cleared, with the status it had; while held, no card is issued to
// them and an operator cannot reinstate a held card. Also the one way a card's status is written, with its
// cardStatusChanged webhook.

import type { Clock } from '../../platform/clock/clock.ts';
import type { ComplianceHolds, HeldObject, HoldKind } from '../../platform/compliance/compliance-holds.ts';
import type { Executor, Tx } from '../../platform/db/database.ts';
import type { CardStatus } from '../../platform/db/schema.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { publishIssuingEvent } from '../events/publish-issuing-event.ts';
import type { CustomerRef } from '../kyc/kyc-service.ts';

type StatusDeps = { clock: Clock; outbox: Outbox };

export async function setCardStatus(
  deps: StatusDeps,
  tx: Tx,
  customer: CustomerRef,
  cardId: string,
  status: CardStatus,
): Promise<void> {
  await tx
    .updateTable('issuing_cards')
    .set({ status, updated_at: deps.clock.now() })
    .where('id', '=', cardId)
    .execute();
  await publishIssuingEvent(deps.outbox, tx, {
    partnerId: customer.partnerId,
    customerId: customer.customerId,
    eventType: 'cardStatusChanged',
    data: { cardId, newStatus: status },
  });
}

/** How a case holds a cardholder (`customer:<id>`) */
export function cardHolds(deps: StatusDeps): HoldKind {
  return {
    /**
     * Every card not closed (nor suspended already) is suspended, then the accounts' ledger rows are
     * locked, so an authorization under way commits before the hold does or sees the suspension
     * (migration 0065). Answers the cards suspended and their statuses.
     */
    async place(tx, subject) {
      const customerId = subject.slice('customer:'.length);
      const cards = await tx
        .selectFrom('issuing_cards')
        .select(['id', 'status', 'partner_id'])
        .where('customer_id', '=', customerId)
        .where('status', 'not in', ['closed', 'suspended'])
        .orderBy('id')
        // Not FOR UPDATE: an authorization holding the account's ledger lock takes a key-share lock on
        // the card (its transaction's foreign key), which FOR UPDATE would wait for — a deadlock
        .forNoKeyUpdate()
        .execute();
      for (const card of cards) {
        await setCardStatus(deps, tx, { customerId, partnerId: card.partner_id }, card.id, 'suspended');
      }
      await tx
        .selectFrom('issuing_accounts as a')
        .innerJoin('ledger_accounts as l', 'l.id', 'a.ledger_account_id')
        .select('l.id')
        .where('a.customer_id', '=', customerId)
        .orderBy('l.id')
        .forUpdate('l')
        .execute();
      return cards.map((card): HeldObject => ({ kind: 'card', id: card.id, previousStatus: card.status }));
    },
    /** A held card given back: the status it had, unless something else moved it since */
    async release(tx, object) {
      const card = await tx
        .selectFrom('issuing_cards')
        .select(['status', 'customer_id', 'partner_id'])
        .where('id', '=', object.id)
        .forNoKeyUpdate()
        .executeTakeFirst();
      if (card?.status !== 'suspended' || !object.previousStatus) return;
      const customer = { customerId: card.customer_id, partnerId: card.partner_id };
      await setCardStatus(deps, tx, customer, object.id, object.previousStatus as CardStatus);
    },
  };
}

/** A card a compliance case holds is reinstated by the case's decision alone */
export async function refuseIfCardHeld(db: Executor, cardId: string): Promise<void> {
  const held = await db
    .selectFrom('compliance_holds')
    .select('case_id')
    .where('object_kind', '=', 'card')
    .where('object_id', '=', cardId)
    .where('released_at', 'is', null)
    .executeTakeFirst();
  if (held) {
    throw new DomainError(
      'invalid_state',
      `compliance case ${held.case_id} holds this card: it is reinstated by the case's decision`,
      { details: { caseId: held.case_id } },
    );
  }
}

/** No card for a held cardholder, said to the partner without the reason: a customer is never told of a case */
export async function refuseIfCustomerHeld(
  tx: Tx,
  holds: ComplianceHolds,
  customerId: string,
): Promise<void> {
  if (await holds.caseHolding(tx, `customer:${customerId}`)) {
    throw new DomainError('invalid_state', 'no card can be issued to this customer now; contact the issuer');
  }
}
