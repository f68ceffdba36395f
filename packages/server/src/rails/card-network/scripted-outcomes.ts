// The sandbox's scripted outcomes of the simulated card network: the next authorizations of a card (by
// its fingerprint, never its number) end as scripted. While any script may exist, decisions read them;
// other processes hear of a new one by notification, and a sweep notices when the last was used up.
import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import type { ScriptableOutcome } from './test-cards.ts';

export { CHALLENGE_TTL_SECONDS, type ChallengeView } from './acs-challenges.ts';

/** Sandbox scripts were added (by any process): decisions read them until none is left. */
const SCRIPTS_CHANNEL = 'tessera_network_scripts';

export class ScriptedOutcomes {
  private readonly seen = new ScriptsSeen();

  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      transact: Transact;
      /** Keys the card fingerprints of scripted outcomes (never the number itself) */
      fingerprintKey: Uint8Array;
    },
  ) {}

  /** Whether scripts may exist (false: a decision need not read them) */
  get mayExist(): boolean {
    return this.seen.mayExist;
  }

  /**
   * Sandbox scripts make outcomes depend on the database: while any may exist, decisions read it. A
   * script (any process's) is heard at once; the sweep notices when the last one was used up.
   */
  watch(processes: { on(channel: string, handler: (payload: string) => unknown): void }): void {
    // An empty payload: the notification connection was (re)made, and news may have been missed.
    processes.on(SCRIPTS_CHANNEL, (payload) => {
      this.seen.heard();
      return payload === '' ? this.check() : undefined;
    });
  }
  /** Sweep: whether any script is left (the fast path resumes once none is). */
  async check(): Promise<number> {
    const since = this.seen.generation;
    const row = await this.deps.db
      .selectFrom('card_network_scripted_outcomes')
      .select('id')
      .limit(1)
      .executeTakeFirst();
    this.seen.checked(since, row !== undefined);
    return 0;
  }
  /** Sandbox: the next authorizations of this card number end as scripted, in order. */
  async add(pan: string, outcomes: ScriptableOutcome[]): Promise<void> {
    const now = this.deps.clock.now();
    this.seen.heard();
    // Other processes hear of it at the commit, before this answers.
    await this.deps.transact(async (tx) => {
      await tx
        .insertInto('card_network_scripted_outcomes')
        .values(
          outcomes.map((outcome) => ({ pan_fingerprint: this.fingerprint(pan), outcome, created_at: now })),
        )
        .execute();
      await sql`SELECT pg_notify(${SCRIPTS_CHANNEL}, 'scripted')`.execute(tx);
    });
  }
  /** The next outcome scripted for this card, used up by this authorization. */
  /** The card's next scripted outcome, used up (none while no script may exist). */
  async next(tx: Tx, pan: string): Promise<ScriptableOutcome | undefined> {
    if (!this.seen.mayExist) return undefined;
    const scripted = await tx
      .deleteFrom('card_network_scripted_outcomes')
      .where(
        'id',
        '=',
        tx
          .selectFrom('card_network_scripted_outcomes')
          .select('id')
          .where('pan_fingerprint', '=', this.fingerprint(pan))
          .orderBy('id')
          .limit(1),
      )
      .returning('outcome')
      .executeTakeFirst();
    return scripted?.outcome as ScriptableOutcome | undefined;
  }
  private fingerprint(pan: string): string {
    return createHmac('sha256', this.deps.fingerprintKey).update(pan).digest('hex');
  }
}

/**
 * Whether sandbox scripts may exist. Assumed until the sweep has looked; a script heard of (here, or by
 * notification from another process) sets it again; a look that raced a script does not clear it.
 */
class ScriptsSeen {
  mayExist = true;
  generation = 0;

  heard(): void {
    this.generation++;
    this.mayExist = true;
  }

  checked(sinceGeneration: number, found: boolean): void {
    if (found) this.mayExist = true;
    else if (sinceGeneration === this.generation) this.mayExist = false;
  }
}
