// The places money moves where risk rules are evaluated (docs/risk.md, Decision points): each names the
// actions a rule there may take and the attributes its expressions read, with their CEL types. One table,
// read by the rule editor's docs, the type checker and the routes' enums alike.

/** 'platform', or a tenant: 'merchant:<id>', 'store:<id>', 'partner:<id>' */
export type RiskScope = string;

/** What a rule's decision about an object is recorded under: a decision record's and a review's */
export interface RuleOnObject {
  id: string;
  tenant: string;
  decisionPoint: string;
  objectId: string;
  ruleId: string;
  ruleName: string;
}

/** A decision record's or a review's row, as RuleOnObject */
export const ruleOnObject = (row: {
  id: string;
  tenant: string;
  decision_point: string;
  object_id: string;
  rule_id: string;
  rule_name: string;
}): RuleOnObject => ({
  id: row.id,
  tenant: row.tenant,
  decisionPoint: row.decision_point,
  objectId: row.object_id,
  ruleId: row.rule_id,
  ruleName: row.rule_name,
});

/** The velocity keys and what each counts by (docs/risk.md, Velocity) */
export const VELOCITY_KEYS = ['ip', 'email', 'card', 'customer', 'tenant'] as const;
export type VelocityKey = (typeof VELOCITY_KEYS)[number];
export const VELOCITY_WINDOWS = { '10m': 600, '1h': 3_600, '24h': 86_400, '30d': 2_592_000 } as const;
export type VelocityWindow = keyof typeof VELOCITY_WINDOWS;

/** `velocity.ip.count_10m`, `velocity.card.sum_24h`, `velocity.ip.declines_1h`, `velocity.card.first_seen_days`, … */
export type VelocityFeature = WindowFeature | FirstSeenFeature;

/** A count, a sum or the declines of a key's signals over a window */
export interface WindowFeature {
  key: VelocityKey;
  metric: 'count' | 'sum' | 'declines';
  window: VelocityWindow;
}

/** Whole days since a key's first signal at the tenant and decision point (0 when this is the first) */
export interface FirstSeenFeature {
  key: Exclude<VelocityKey, 'tenant'>;
  metric: 'first_seen';
  window: 'days';
}

export const isWindowFeature = (f: VelocityFeature): f is WindowFeature => f.metric !== 'first_seen';

/**
 * Declines are counted per card and per IP over an hour; counts and sums per key over every window; a
 * key's first sighting for every key but the tenant.
 */
export function velocityFeatures(): VelocityFeature[] {
  const features: VelocityFeature[] = [];
  for (const key of VELOCITY_KEYS) {
    for (const window of Object.keys(VELOCITY_WINDOWS) as VelocityWindow[]) {
      features.push({ key, metric: 'count', window }, { key, metric: 'sum', window });
    }
    if (key === 'card' || key === 'ip') features.push({ key, metric: 'declines', window: '1h' });
    if (key !== 'tenant') features.push({ key, metric: 'first_seen', window: 'days' });
  }
  return features;
}

export const featureName = (f: VelocityFeature) => `${f.key}.${f.metric}_${f.window}`;

interface AttributeDoc {
  type: string;
  description: string;
}

const VELOCITY_SCHEMA = Object.fromEntries(
  VELOCITY_KEYS.map((key) => [
    key,
    Object.fromEntries(
      velocityFeatures()
        .filter((f) => f.key === key)
        .map((f) => [`${f.metric}_${f.window}`, 'int']),
    ),
  ]),
);

const PAYMENTS_CHARGE: Record<string, AttributeDoc | Record<string, AttributeDoc>> = {
  amount: { type: 'int', description: 'the amount charged, in minor units of `currency`' },
  currency: { type: 'string', description: 'ISO 4217 code' },
  ip: { type: 'string', description: 'the buyer’s IP address as the order gave it ("" when none)' },
  ip_country: {
    type: 'string',
    description:
      'the country of `ip` (ISO 3166 alpha-2) in the operator’s IP database, TESSERA_IP_COUNTRY_DB ("" when none, or not in it)',
  },
  email: { type: 'string', description: 'the customer’s email, lower case ("" when none)' },
  email_domain: { type: 'string', description: 'the part of `email` after the @' },
  billing_country: {
    type: 'string',
    description: 'the card holder’s country as given (ISO 3166 alpha-2, "" when none)',
  },
  source: {
    type: 'string',
    description: 'what pays: new, stored, decryptedWallet, walletToken or networkToken',
  },
  order_type: { type: 'string', description: 'purchase, recurring, managed or credit' },
  initiator: {
    type: 'string',
    description: 'customer (the buyer is present) or merchant (a bill, a rebill)',
  },
  authenticated: {
    type: 'bool',
    description:
      'the buyer was authenticated before reaching us (3-D Secure data, a wallet or token cryptogram)',
  },
  card: {
    bin: { type: 'string', description: 'the first six digits' },
    brand: { type: 'string', description: 'visa, mastercard, amex, …' },
    funding: { type: 'string', description: 'credit, debit or prepaid (the network’s BIN table)' },
    country: { type: 'string', description: 'the issuer’s country (the network’s BIN table)' },
    fingerprint: {
      type: 'string',
      description: 'the same for every use of one card number, on this platform',
    },
  },
  customer: {
    id: { type: 'string', description: 'the customer’s id' },
    age_days: { type: 'int', description: 'days since the customer was created' },
  },
  merchant: {
    id: { type: 'string', description: 'the merchant’s id' },
    site_id: { type: 'string', description: 'the site’s id' },
    mcc: { type: 'string', description: 'the site’s merchant category code, ISO 18245 ("" when not set)' },
    country: { type: 'string', description: 'the site’s country, ISO 3166 alpha-2 ("" when not set)' },
  },
};

const ISSUING_AUTHORIZATION: Record<string, AttributeDoc | Record<string, AttributeDoc>> = {
  amount: { type: 'int', description: 'the amount asked, in minor units of `currency`' },
  currency: { type: 'string', description: 'ISO 4217 code (the card’s account’s)' },
  issuing: {
    mcc: {
      type: 'string',
      description: 'the merchant’s category code (ISO 18245; "" when the network sent none)',
    },
    merchant_country: {
      type: 'string',
      description: 'the merchant’s country (ISO 3166 alpha-2; "" when none)',
    },
    merchant_id: { type: 'string', description: 'the acquirer’s id of the merchant ("" when none)' },
    merchant_name: { type: 'string', description: 'the merchant’s name as the network sent it' },
    channel: { type: 'string', description: 'ecommerce, pos, atm or contactless' },
    three_ds: { type: 'bool', description: 'the network asked for a 3-D Secure challenge already' },
  },
  card: {
    id: { type: 'string', description: 'the issued card’s id' },
    fingerprint: { type: 'string', description: 'the same for every card with this number' },
  },
  customer: {
    id: { type: 'string', description: 'the cardholder’s id' },
    age_days: { type: 'int', description: 'days since the cardholder became a customer' },
    country: {
      type: 'string',
      description: 'the cardholder’s country of residence from their KYC (ISO 3166 alpha-2; "" when none)',
    },
  },
  account: {
    id: { type: 'string', description: 'the card’s account’s id' },
    age_days: { type: 'int', description: 'days since the account was opened' },
  },
};

/** Money out's tenant, beside the rules' facts: who is paid, from which balance */
const MONEY_OUT_TENANT: Record<string, AttributeDoc> = {
  kind: { type: 'string', description: 'site (a payments merchant’s) or store (a crypto store’s)' },
  id: { type: 'string', description: 'the site’s or the store’s id' },
  age_days: { type: 'int', description: 'days since the site or store was created' },
};

const PAYOUT: Record<string, AttributeDoc | Record<string, AttributeDoc>> = {
  amount: { type: 'int', description: 'the payout’s amount, in minor units of `currency`' },
  currency: { type: 'string', description: 'ISO 4217 code' },
  payout: {
    itemized: {
      type: 'bool',
      description: 'it pays every available balance transaction (false: an amount chosen by hand)',
    },
    scheduled: { type: 'bool', description: 'made by the payout schedule (false: on demand)' },
  },
  bank_account: {
    country: { type: 'string', description: 'the IBAN’s country (ISO 3166 alpha-2)' },
    holder_name: { type: 'string', description: 'the account holder’s name as set' },
    age_days: {
      type: 'int',
      description: 'days since the bank account was set or last changed (0 the same day)',
    },
  },
  tenant: MONEY_OUT_TENANT,
};

const BANK_ACCOUNT_CHANGE: Record<string, AttributeDoc | Record<string, AttributeDoc>> = {
  iban: {
    type: 'string',
    description: "the new IBAN, electronic format (compare with lists: `iban in list('blocked_ibans')`)",
  },
  country: { type: 'string', description: 'the new IBAN’s country (ISO 3166 alpha-2)' },
  bank_account: {
    holder_name: { type: 'string', description: 'the new account holder’s name' },
    first: { type: 'bool', description: 'no account was set before' },
    previous_country: { type: 'string', description: 'the replaced account’s country ("" when first)' },
    previous_age_days: {
      type: 'int',
      description: 'days the replaced account was in place (0 when first)',
    },
  },
  tenant: MONEY_OUT_TENANT,
};

/** The buyer of a crypto order, as both crypto decision points read them (crypto/risk/crypto-risk.ts) */
const CRYPTO_BUYER: Record<string, AttributeDoc | Record<string, AttributeDoc>> = {
  email: { type: 'string', description: 'the buyer’s email as the order gave it, lower case' },
  email_domain: { type: 'string', description: 'the part of `email` after the @' },
  billing_country: { type: 'string', description: 'the buyer’s country as the order gave it' },
  store: { id: { type: 'string', description: 'the store’s id' } },
};

const CRYPTO_ORDER: Record<string, AttributeDoc | Record<string, AttributeDoc>> = {
  amount: { type: 'int', description: 'the order’s total, in minor units of `currency`' },
  currency: { type: 'string', description: 'the order’s currency (ISO 4217)' },
  ...CRYPTO_BUYER,
  order: {
    line_items: { type: 'int', description: 'how many line items the order has' },
    ttl_seconds: { type: 'int', description: 'seconds the buyer has to pay' },
  },
};

const CRYPTO_REFUND: Record<string, AttributeDoc | Record<string, AttributeDoc>> = {
  amount: { type: 'int', description: 'the refund proposed, in minor units of `currency`' },
  currency: { type: 'string', description: 'the payment’s currency (ISO 4217)' },
  ...CRYPTO_BUYER,
  refund: {
    share_bps: {
      type: 'int',
      description: 'the refund’s share of the payment, in basis points (10000: all)',
    },
    reason: { type: 'string', description: 'the reason the store gave ("" when none)' },
  },
  payment: {
    total: { type: 'int', description: 'the payment’s total, in minor units of `currency`' },
    asset: { type: 'string', description: 'the crypto currency it was paid in (USDC, ETH, …)' },
    network: { type: 'string', description: 'the network it arrived on, where the refund is sent' },
    age_days: { type: 'int', description: 'days since the payment' },
  },
};

const ISSUING_TOPUP: Record<string, AttributeDoc | Record<string, AttributeDoc>> = {
  amount: { type: 'int', description: 'the topup’s amount, in minor units of `currency`' },
  currency: { type: 'string', description: 'the account’s currency (ISO 4217)' },
  topup: {
    method: {
      type: 'string',
      description: 'bank_transfer (also payable by card on the hosted page) or crypto',
    },
  },
  customer: {
    id: { type: 'string', description: 'the cardholder’s id' },
    age_days: { type: 'int', description: 'days since the cardholder became a customer' },
    country: {
      type: 'string',
      description: 'the cardholder’s country of residence from their KYC (ISO 3166 alpha-2; "" when none)',
    },
  },
  account: { id: { type: 'string', description: 'the account topped up' } },
};

export type TenantKind = 'merchant' | 'store' | 'partner';

export interface DecisionPoint {
  name: string;
  description: string;
  /** What a rule here may do; the first is what happens when none matched */
  actions: readonly string[];
  /** The tenants whose rules apply, beside the platform's */
  tenantKinds: readonly TenantKind[];
  attributes: Record<string, AttributeDoc | Record<string, AttributeDoc>>;
}

export const DECISION_POINTS = {
  'payments.charge': {
    name: 'payments.charge',
    description:
      'every payments charge: a new card, a stored card, a wallet, a network token, the hosted checkout, a payment link, a recurring bill, a rebill',
    actions: ['allow', 'block', 'review', 'challenge'],
    tenantKinds: ['merchant'],
    attributes: PAYMENTS_CHARGE,
  },
  'issuing.authorization': {
    name: 'issuing.authorization',
    description:
      'every authorization of an issued card: the card network’s, and the on-us one of a payment on the payments API',
    actions: ['allow', 'decline', 'challenge'],
    tenantKinds: ['partner'],
    attributes: ISSUING_AUTHORIZATION,
  },
  'issuing.topup': {
    name: 'issuing.topup',
    description: 'every new topup of an issued card’s account: by bank transfer (or card) and by crypto',
    actions: ['allow', 'decline', 'challenge'],
    tenantKinds: ['partner'],
    attributes: ISSUING_TOPUP,
  },
  'crypto.order': {
    name: 'crypto.order',
    description: 'every new crypto order, before it is written',
    actions: ['allow', 'block', 'review'],
    tenantKinds: ['store'],
    attributes: CRYPTO_ORDER,
  },
  'crypto.refund': {
    name: 'crypto.refund',
    description: 'every refund a store proposes of a crypto payment, before it is written',
    actions: ['allow', 'block', 'review'],
    tenantKinds: ['store'],
    attributes: CRYPTO_REFUND,
  },
  payout: {
    name: 'payout',
    description:
      'every payout of a site’s or a store’s balance: on demand and by the schedule (a merchant’s rules apply to its sites’ payouts)',
    actions: ['allow', 'hold', 'block'],
    tenantKinds: ['merchant', 'store'],
    attributes: PAYOUT,
  },
  'bank_account.change': {
    name: 'bank_account.change',
    description: 'every setting or change of a site’s or a store’s payout bank account',
    actions: ['allow', 'hold', 'block'],
    tenantKinds: ['merchant', 'store'],
    attributes: BANK_ACCOUNT_CHANGE,
  },
} as const satisfies Record<string, DecisionPoint>;

export type DecisionPointName = keyof typeof DECISION_POINTS;
export const DECISION_POINT_NAMES = Object.keys(DECISION_POINTS) as [
  DecisionPointName,
  ...DecisionPointName[],
];
export const RULE_ACTIONS = ['allow', 'block', 'review', 'challenge', 'decline', 'hold'] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

/** What every decision point has beside its own attributes (RiskEngine.complete), velocity aside */
export const COMMON_ATTRIBUTES: Record<string, AttributeDoc> = {
  amount_reporting: {
    type: 'int',
    description:
      'the amount in the platform’s reporting currency (TESSERA_REPORTING_CURRENCY), minor units, at the FX rail’s rate of the last minute; 0 when the rail cannot price the currency',
  },
};

/** The CEL schema of a decision point's attributes, velocity included. */
export function celSchema(point: DecisionPointName): Record<string, unknown> {
  const schema: Record<string, unknown> = { amount_reporting: 'int' };
  for (const [name, doc] of Object.entries(DECISION_POINTS[point].attributes)) {
    schema[name] =
      'type' in doc && typeof doc.type === 'string'
        ? doc.type
        : Object.fromEntries(Object.entries(doc).map(([k, d]) => [k, (d as AttributeDoc).type]));
  }
  schema.velocity = VELOCITY_SCHEMA;
  return schema;
}
