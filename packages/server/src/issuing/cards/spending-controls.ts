// Spending controls of issued cards (docs/issuing.md, Spending controls): the controls' shape, the merchant
// category groups, and the pure rule that says which control, if any, refuses an authorization. No database
// here (spending-controls-store.ts keeps them and the spend they count).

/** How the card is used, as the authorization request says */
export const CHANNELS = ['ecommerce', 'pos', 'atm', 'contactless'] as const;
export type Channel = (typeof CHANNELS)[number];

/**
 * Who set the controls: the partner for its whole program, for one account or for one card, or the
 * cardholder for their own card. An authorization must pass every scope's controls, so a cardholder can
 * only narrow what the partner allows, never widen it.
 */
export const CONTROL_SCOPES = ['partner', 'account', 'card', 'cardholder'] as const;
export type ControlScope = (typeof CONTROL_SCOPES)[number];

export const LIMIT_INTERVALS = ['per_day', 'per_month', 'lifetime'] as const;
export type LimitInterval = (typeof LIMIT_INTERVALS)[number];

/**
 * Named merchant category groups, as ranges of ISO 18245 codes: a control may list a group's name where it
 * lists codes. Airlines, car rental and hotels are the schemes' brand ranges plus their generic code.
 */
export const MCC_GROUPS: Record<string, readonly (readonly [number, number])[]> = {
  airlines: [
    [3000, 3350],
    [4511, 4511],
  ],
  car_rental: [
    [3351, 3500],
    [7512, 7512],
  ],
  hotels: [
    [3501, 3999],
    [7011, 7011],
  ],
  cash_withdrawal: [[6010, 6011]],
  quasi_cash: [
    [6050, 6051],
    [6540, 6540],
  ],
  gambling: [
    [7800, 7802],
    [7995, 7995],
  ],
  money_transfer: [
    [4829, 4829],
    [6536, 6538],
  ],
  adult_content: [
    [5967, 5967],
    [7273, 7273],
  ],
};

/** An entry of an MCC list: one code ('5411'), a range ('3000-3299') or a group's name ('gambling') */
export const MCC_ENTRY = /^(\d{4})(?:-(\d{4}))?$/;

export interface SpendingLimit {
  amount: bigint;
  interval: LimitInterval;
}

/** One scope's controls, amounts in minor units of `currency` */
export interface SpendingControls {
  allowedMccs?: string[];
  blockedMccs?: string[];
  allowedCountries?: string[];
  blockedCountries?: string[];
  channels?: Partial<Record<Channel, boolean>>;
  maxPerAuthorization?: bigint;
  limits?: SpendingLimit[];
  maxCountPerDay?: number;
  /** The currency the amounts are in: the account's; for a partner's program, cards of that currency */
  currency?: string;
}

/** Which control refused: the wire's `spendingControl` extension on a declined transaction */
export type ControlName =
  | 'allowedMccs'
  | 'blockedMccs'
  | 'allowedCountries'
  | 'blockedCountries'
  | 'channels'
  | 'maxPerAuthorization'
  | `limits.${LimitInterval}`
  | 'maxCountPerDay';

export interface Refusal {
  scope: ControlScope;
  control: ControlName;
}

export interface ScopedControls {
  scope: ControlScope;
  controls: SpendingControls;
}

/** What an authorization asks for, as the controls read it */
export interface AuthorizationFacts {
  amount: bigint;
  currency: string;
  /** Unknown (not sent): no allowed list admits it, no blocked list refuses it */
  mcc: string | null;
  merchantCountry: string | null;
  channel: Channel;
}

/** What a card or an account has spent so far in the current UTC day and month and over its life */
export interface Spend {
  dayAmount: bigint;
  dayCount: number;
  monthAmount: bigint;
  lifetimeAmount: bigint;
}

export const NOTHING_SPENT: Spend = { dayAmount: 0n, dayCount: 0, monthAmount: 0n, lifetimeAmount: 0n };

/** Whether the controls count spend (their subject then keeps a counter) */
export function countsSpend(controls: SpendingControls): boolean {
  return (controls.limits?.length ?? 0) > 0 || controls.maxCountPerDay !== undefined;
}

/**
 * The first control that refuses the authorization, scope by scope (the partner's first, the cardholder's
 * last), or undefined when all pass. `spend` is what the scope's subject has spent before this authorization:
 * the account's for the account's controls, the card's for the others.
 */
export function refusalOf(
  facts: AuthorizationFacts,
  scoped: readonly ScopedControls[],
  spendOf: (scope: ControlScope) => Spend,
): Refusal | undefined {
  for (const { scope, controls } of scoped) {
    const control = refusingControl(facts, controls, () => spendOf(scope));
    if (control) return { scope, control };
  }
  return undefined;
}

function refusingControl(
  facts: AuthorizationFacts,
  c: SpendingControls,
  spend: () => Spend,
): ControlName | undefined {
  if (c.allowedMccs && !(facts.mcc !== null && c.allowedMccs.some((e) => mccMatches(e, facts.mcc as string))))
    return 'allowedMccs';
  if (c.blockedMccs && facts.mcc !== null && c.blockedMccs.some((e) => mccMatches(e, facts.mcc as string)))
    return 'blockedMccs';
  if (
    c.allowedCountries &&
    !(facts.merchantCountry !== null && c.allowedCountries.includes(facts.merchantCountry))
  )
    return 'allowedCountries';
  if (
    c.blockedCountries &&
    facts.merchantCountry !== null &&
    c.blockedCountries.includes(facts.merchantCountry)
  )
    return 'blockedCountries';
  if (c.channels?.[facts.channel] === false) return 'channels';
  // Amounts are compared only in their own currency (a card of another currency is not theirs to limit).
  if (c.currency !== undefined && c.currency !== facts.currency) return countRefusal(c, spend);
  if (c.maxPerAuthorization !== undefined && facts.amount > c.maxPerAuthorization)
    return 'maxPerAuthorization';
  for (const limit of c.limits ?? []) {
    const s = spend();
    const before =
      limit.interval === 'per_day'
        ? s.dayAmount
        : limit.interval === 'per_month'
          ? s.monthAmount
          : s.lifetimeAmount;
    if (before + facts.amount > limit.amount) return `limits.${limit.interval}`;
  }
  return countRefusal(c, spend);
}

function countRefusal(c: SpendingControls, spend: () => Spend): ControlName | undefined {
  if (c.maxCountPerDay !== undefined && spend().dayCount + 1 > c.maxCountPerDay) return 'maxCountPerDay';
  return undefined;
}

/** Whether an MCC list's entry (a code, a range or a group) covers the code. */
export function mccMatches(entry: string, mcc: string): boolean {
  const code = Number(mcc);
  const group = MCC_GROUPS[entry];
  if (group) return group.some(([from, to]) => code >= from && code <= to);
  const m = MCC_ENTRY.exec(entry);
  if (!m) return false;
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  return code >= from && code <= to;
}

/** The controls as stored (jsonb): amounts as decimal strings of minor units */
export type StoredControls = Omit<SpendingControls, 'maxPerAuthorization' | 'limits'> & {
  maxPerAuthorization?: string;
  limits?: { amount: string; interval: LimitInterval }[];
};

export function toStored(c: SpendingControls): StoredControls {
  const { maxPerAuthorization, limits, ...rest } = c;
  return {
    ...rest,
    ...(maxPerAuthorization !== undefined ? { maxPerAuthorization: maxPerAuthorization.toString() } : {}),
    ...(limits ? { limits: limits.map((l) => ({ amount: l.amount.toString(), interval: l.interval })) } : {}),
  };
}

export function fromStored(s: StoredControls): SpendingControls {
  const { maxPerAuthorization, limits, ...rest } = s;
  return {
    ...rest,
    ...(maxPerAuthorization !== undefined ? { maxPerAuthorization: BigInt(maxPerAuthorization) } : {}),
    ...(limits ? { limits: limits.map((l) => ({ amount: BigInt(l.amount), interval: l.interval })) } : {}),
  };
}

/** Whether the controls say nothing (saving them removes the scope's controls) */
export function isEmpty(c: SpendingControls): boolean {
  return Object.entries(c).every(([key, value]) => key === 'currency' || value === undefined);
}
