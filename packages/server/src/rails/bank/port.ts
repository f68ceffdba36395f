// The bank payouts travel through (docs/payouts.md, The bank rail): chosen by TESSERA_BANK_RAIL. The
// simulator pays the next sandbox day; the ISO 20022 adapter writes pain.001 files for the operator's
// bank connection (EBICS, SFTP, host to host) and reads the status reports and statements it drops.
import type { MoneyOut } from '../../platform/payouts/money-out.ts';

export interface BankRail {
  readonly name: 'simulator' | 'iso20022';
  /** Hands payouts still pending to the bank; answers how many went */
  dispatch(): Promise<number>;
  /** Learns what the bank did (the simulator's arrivals, the inbox's files); answers how many changed */
  collect(): Promise<number>;
  /**
   * The sandbox's lever: the bank books (pays) this payout. The simulator's are paid at once; one sent in
   * a bank file is booked by a camt.054 written into the inbox and read as the bank's would be.
   */
  book(payoutId: string): Promise<void>;
}

/** Money out with the bank that sends its payouts: what the operator's tools (admin, sandbox, console) drive. */
export type MoneyOutWithBank = MoneyOut & { bank: BankRail };
