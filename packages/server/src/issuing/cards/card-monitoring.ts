// Cards watched for money laundering patterns (docs/compliance.md, Monitoring): as a card is issued, in
// its transaction, the cardholder's new cards of the window are counted (the many-cards scenario,
// platform/compliance/aml-scenarios.ts) — many cards in one name is how cards are passed on to others. A
// pattern met raises an alert in the cardholder's case, once per run of cards.
import type { Clock } from '../../platform/clock/clock.ts';
import type { AmlSettings } from '../../platform/compliance/aml-scenarios.ts';
import type { ComplianceCases } from '../../platform/compliance/compliance-cases.ts';
import type { Tx } from '../../platform/db/database.ts';

export class CardMonitoring {
  constructor(
    private readonly deps: {
      clock: Clock;
      cases: Pick<ComplianceCases, 'raiseScenario'>;
      manyCards: AmlSettings['manyCards'];
    },
  ) {}

  /** A card issued (not a reissue): the cardholder's new cards of the window counted */
  async issued(tx: Tx, card: { customerId: string; partnerId: string }): Promise<void> {
    const settings = this.deps.manyCards;
    if (!settings) return;
    const since = new Date(this.deps.clock.now().getTime() - settings.days * 86_400_000);
    const cards = await tx
      .selectFrom('issuing_cards')
      .select(['id', 'created_at'])
      .where('customer_id', '=', card.customerId)
      .where('replaces_card_id', 'is', null)
      .where('created_at', '>', since)
      // In the order issued (seq: cards issued at one instant keep their order, so the run's first is stable)
      .orderBy('seq')
      .execute();
    if (cards.length < settings.count) return;
    await this.deps.cases.raiseScenario(tx, {
      subject: `customer:${card.customerId}`,
      tenant: `partner:${card.partnerId}`,
      scenario: 'many_cards',
      // The run's first card: more cards of the same run add nothing; a later run is a new alert
      key: `many_cards:customer:${card.customerId}:${cards[0]?.id}`,
      evidence: {
        summary: `${cards.length} cards issued to one cardholder within ${settings.days} days`,
        parameters: settings,
        cards: cards.map((c) => ({ id: c.id, issuedAt: c.created_at.toISOString() })),
      },
    });
  }
}
