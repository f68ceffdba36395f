// What a sandbox trigger works with: the platform's own services (a trigger makes real objects through
// the same code as the APIs, so its events are real events), and the sandbox clock, which a trigger
// moves on when its event needs time to pass (confirmations, expiries), as /sandbox/clock/advance does.
export type TriggerApi = 'issuing' | 'payments' | 'crypto';

export interface Trigger<Services> {
  api: TriggerApi;
  /** What the trigger does, for `tessera trigger --help` and the sandbox API's document */
  description: string;
  /**
   * The event it produces, when its name is not one: a step that ends in another object's event (a review
   * approved ends in the transaction's capture)
   */
  produces?: string;
  /** Makes the objects and the event for the tenant; answers the ids of what it made */
  run(services: Services, tenantId: string): Promise<Record<string, string>>;
}

export interface TriggerClock {
  /** Moves the sandbox clock on and runs what became due */
  advance(seconds: number): Promise<void>;
}

/** A short random suffix for the references of what a trigger makes. */
export const triggerRef = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
