// Setting and reading spending controls (docs/issuing.md, Spending controls): a partner's for its program, an
// account or a card; a cardholder's for their own card. Amounts come as the client wrote them and are read in
// the subject's currency here, where it is known.
import type { Db, Executor } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { isUuid } from '../../platform/ids.ts';
import type { ClientAmount } from '../../platform/money/amount.ts';
import { type Asset, findAsset } from '../../platform/money/assets.ts';
import type { CustomerRef } from '../kyc/kyc-service.ts';
import { assetOf } from '../transactions/transaction.ts';
import type { Channel, ControlScope, LimitInterval, SpendingControls } from './spending-controls.ts';
import type { ControlledCard, SpendingControlsStore } from './spending-controls-store.ts';

/** Controls as the route read them: lists and choices checked, amounts not yet in an asset */
export interface ControlsCommand {
  allowedMccs?: string[];
  blockedMccs?: string[];
  allowedCountries?: string[];
  blockedCountries?: string[];
  channels?: Partial<Record<Channel, boolean>>;
  maxPerAuthorization?: ClientAmount;
  limits?: { amount: ClientAmount; interval: LimitInterval }[];
  maxCountPerDay?: number;
  /** The program's amounts' currency (a card's and an account's are their account's) */
  currency?: string;
}

/** Who sets a card's controls: its partner, or the cardholder (who can only add to the partner's) */
export type ControlsActor = { partnerId: string; cardholder?: CustomerRef };

/** The controls in force, by scope, each with the currency of its amounts */
export type ControlsByScope = Partial<Record<ControlScope, SpendingControls>>;

interface ControlledAccount {
  id: string;
  partner_id: string;
  currency: string;
}

export class SpendingControlsService {
  constructor(private readonly deps: { db: Db; transact: Transact; store: SpendingControlsStore }) {}

  async ofCard(actor: ControlsActor, cardId: string): Promise<ControlsByScope> {
    const card = await this.card(this.deps.db, actor, cardId);
    return this.read(this.deps.db, [
      [card.partner_id, 'partner'],
      [card.account_id, 'account'],
      [card.id, 'card'],
      [card.id, 'cardholder'],
    ]);
  }

  async setForCard(actor: ControlsActor, cardId: string, command: ControlsCommand): Promise<ControlsByScope> {
    const scope: ControlScope = actor.cardholder ? 'cardholder' : 'card';
    await this.deps.transact(async (tx) => {
      const card = await this.card(tx, actor, cardId);
      await this.deps.store.put(
        tx,
        { subjectId: card.id, scope, partnerId: card.partner_id },
        resolved(command, assetOf(card.currency)),
      );
    });
    return this.ofCard(actor, cardId);
  }

  async ofAccount(partnerId: string, accountId: string): Promise<ControlsByScope> {
    const account = await this.account(this.deps.db, partnerId, accountId);
    return this.read(this.deps.db, [
      [account.partner_id, 'partner'],
      [account.id, 'account'],
    ]);
  }

  async setForAccount(
    partnerId: string,
    accountId: string,
    command: ControlsCommand,
  ): Promise<ControlsByScope> {
    await this.deps.transact(async (tx) => {
      const account = await this.account(tx, partnerId, accountId);
      await this.deps.store.put(
        tx,
        { subjectId: account.id, scope: 'account', partnerId },
        resolved(command, assetOf(account.currency)),
      );
    });
    return this.ofAccount(partnerId, accountId);
  }

  ofProgram(partnerId: string): Promise<ControlsByScope> {
    return this.read(this.deps.db, [[partnerId, 'partner']]);
  }

  /** The program's controls: every card of the partner; amounts only for cards of the controls' currency. */
  async setForProgram(partnerId: string, command: ControlsCommand): Promise<ControlsByScope> {
    const hasAmounts = command.maxPerAuthorization !== undefined || (command.limits?.length ?? 0) > 0;
    if (hasAmounts && command.currency === undefined) {
      throw new DomainError(
        'validation_failed',
        'currency is required with amounts in a program’s controls',
        {
          field: 'currency',
        },
      );
    }
    const asset = command.currency === undefined ? undefined : findAsset(command.currency);
    if (command.currency !== undefined && !asset) {
      throw new DomainError('validation_failed', 'currency must be an ISO 4217 code', { field: 'currency' });
    }
    await this.deps.transact((tx) =>
      this.deps.store.put(
        tx,
        { subjectId: partnerId, scope: 'partner', partnerId },
        resolved(command, asset),
      ),
    );
    return this.ofProgram(partnerId);
  }

  /** The subjects' controls, by scope, in one read */
  private async read(db: Executor, subjects: [string, ControlScope][]): Promise<ControlsByScope> {
    const found = await this.deps.store.ofSubjects(db, subjects);
    return Object.fromEntries(found.map((f) => [f.scope, f.controls]));
  }

  /** The actor's card: the partner's, or the cardholder's own; any other is a 404. */
  private async card(
    db: Executor,
    actor: ControlsActor,
    cardId: string,
  ): Promise<ControlledCard & { currency: string }> {
    const card = isUuid(cardId)
      ? await db
          .selectFrom('issuing_cards as c')
          .innerJoin('issuing_accounts as a', 'a.id', 'c.account_id')
          .select(['c.id', 'c.account_id', 'c.partner_id', 'c.customer_id', 'a.currency'])
          .where('c.id', '=', cardId)
          .where('c.partner_id', '=', actor.partnerId)
          .executeTakeFirst()
      : undefined;
    if (!card || (actor.cardholder && card.customer_id !== actor.cardholder.customerId))
      throw notFound('card');
    return card;
  }

  private async account(db: Executor, partnerId: string, accountId: string): Promise<ControlledAccount> {
    const account = isUuid(accountId)
      ? await db
          .selectFrom('issuing_accounts')
          .select(['id', 'partner_id', 'currency'])
          .where('id', '=', accountId)
          .where('partner_id', '=', partnerId)
          .executeTakeFirst()
      : undefined;
    if (!account) throw notFound('account');
    return account;
  }
}

/** The command's amounts in minor units of the asset (each a 400 naming its field when it cannot be) */
function resolved(command: ControlsCommand, asset: Asset | undefined): SpendingControls {
  const { maxPerAuthorization, limits, currency: _given, ...rest } = command;
  const inAsset = (amount: ClientAmount) => amount.in(asset as Asset);
  return {
    ...rest,
    ...(asset ? { currency: asset.code } : {}),
    ...(maxPerAuthorization !== undefined ? { maxPerAuthorization: inAsset(maxPerAuthorization) } : {}),
    ...(limits ? { limits: limits.map((l) => ({ amount: inAsset(l.amount), interval: l.interval })) } : {}),
  };
}
