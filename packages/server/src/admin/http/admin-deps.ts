// What the admin and sandbox routes use.
import type { CardsService } from '../../issuing/cards/cards-service.ts';
import type { Approvals } from '../../platform/approvals/approvals.ts';
import type { BankAccounts } from '../../platform/bank-accounts/bank-accounts.ts';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import type { EventsService } from '../../platform/events/events-service.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import type { MerchantsService } from '../../platform/tenants/merchants-service.ts';
import type { PartnersService } from '../../platform/tenants/partners-service.ts';
import type { StoresService } from '../../platform/tenants/stores-service.ts';
import type { MoneyOutWithBank } from '../../rails/bank/port.ts';

export interface AdminDeps {
  db: Db;
  partners: PartnersService;
  merchants: MerchantsService;
  stores: StoresService;
  events: EventsService;
  bankAccounts: BankAccounts;
  approvals: Approvals;
  moneyOut: MoneyOutWithBank;
  ledger: Ledger;
  clock: Clock;
  /** The issuer's actions on issued cards */
  cards: Pick<CardsService, 'suspend' | 'reinstate'>;
  /** Validates an outbound URL (SSRF guard); answers it normalised, or null when cleared */
  checkWebhookUrl(url: string | null | undefined, field: string): string | null;
}
