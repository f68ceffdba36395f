// Transaction monitoring scenarios (docs/compliance.md, Monitoring): patterns of money that a compliance
// officer must look at, each a pure judgement over what the API that moves the money reads for it. A
// scenario met raises an alert in its subject's case (compliance-cases.ts, raiseScenario), once per key.
//
// Structuring: several payments in, each just under a reporting threshold, within a window — the pattern
// of someone keeping each amount below the line on purpose. `TESSERA_AML_STRUCTURING=THRESHOLD:COUNT:HOURS`
// (default 1000:3:24): COUNT topups completed within HOURS, each from 90 % of THRESHOLD (whole major units
// of its currency) up to, not including, THRESHOLD.

import type { Asset } from '../money/assets.ts';

export interface StructuringSettings {
  /** Whole major units of the movement's currency */
  threshold: bigint;
  count: number;
  windowHours: number;
}

/** How close under the threshold an amount counts as "just under" */
const JUST_UNDER = 0.9;

/** `off`, or THRESHOLD:COUNT:HOURS (as STRUCTURING_PATTERN checked it) */
export function parseStructuring(text: string): StructuringSettings | undefined {
  if (text === 'off') return undefined;
  const [threshold = '0', count = '', hours = ''] = text.split(':');
  return { threshold: BigInt(threshold), count: Number(count), windowHours: Number(hours) };
}

/** THRESHOLD a whole amount, COUNT 2–99, HOURS 1–9999 */
export const STRUCTURING_PATTERN = /^(off|[1-9]\d{0,11}:([2-9]|[1-9]\d):([1-9]\d{0,3}))$/;

export interface Movement {
  id: string;
  amount: bigint;
  at: Date;
}

/**
 * The movements that make structuring, when there are enough of them: those in the window ending at `now`,
 * each just under the threshold. Undefined when the pattern is not met.
 */
export function structuringMet(
  settings: StructuringSettings,
  asset: Asset,
  movements: readonly Movement[],
  now: Date,
): Movement[] | undefined {
  const threshold = settings.threshold * 10n ** BigInt(asset.exponent);
  const floor = (threshold * BigInt(Math.round(JUST_UNDER * 100))) / 100n;
  const since = now.getTime() - settings.windowHours * 3_600_000;
  const justUnder = movements.filter(
    (m) => m.at.getTime() > since && m.amount >= floor && m.amount < threshold,
  );
  return justUnder.length >= settings.count ? justUnder : undefined;
}

// The other scenarios' settings, each `off` or its numbers (config.ts checks the patterns):
//
// Many cards: COUNT new cards (reissues not counted) of one cardholder within DAYS — one person holding
// many cards is how cards are passed on to others. `TESSERA_AML_MANY_CARDS=COUNT:DAYS` (default 5:30).
//
// Rapid movement: a completed topup of which PERCENT or more is spent by card within HOURS — money that
// only passes through. `TESSERA_AML_RAPID_MOVEMENT=PERCENT:HOURS` (default 80:24).
//
// Unusual volume: a merchant's or store's day (UTC) over FACTOR times its average day of the 90 before,
// and at least MINIMUM major units, once it has 30 days of history. `TESSERA_AML_UNUSUAL_VOLUME=FACTOR:MINIMUM`
// (default 5:1000).
//
// Refunds over captures: a merchant's refunds and card credits over DAYS exceed what it captured, with at
// least COUNT of them — money sent out to cards that did not pay it. `TESSERA_AML_REFUNDS_OVER_CAPTURES=COUNT:DAYS`
// (default 3:30).
//
// High-risk countries: a screened party (a cardholder's nationality, an owner's, a business's country) of
// a country on the list. `TESSERA_AML_HIGH_RISK_COUNTRIES=KP,IR,MM` (default: FATF's jurisdictions under a
// call for action), or off.

/** `off`, or two whole numbers A:B each within its bounds */
export const pairPattern = (maxA: number, maxB: number) =>
  new RegExp(`^(off|[1-9]\\d{0,${String(maxA).length - 1}}:[1-9]\\d{0,${String(maxB).length - 1}})$`);

export interface Pair {
  a: number;
  b: number;
}

/** `off` → undefined; `A:B` → the two numbers (the pattern checked them) */
export function parsePair(text: string): Pair | undefined {
  if (text === 'off') return undefined;
  const [a = '0', b = '0'] = text.split(':');
  return { a: Number(a), b: Number(b) };
}

export const COUNTRY_LIST_PATTERN = /^(off|[A-Z]{2}(,[A-Z]{2})*)$/;

export function parseCountries(text: string): ReadonlySet<string> {
  return new Set(text === 'off' ? [] : text.split(','));
}

export interface AmlSettings {
  structuring: StructuringSettings | undefined;
  /** COUNT new cards within DAYS */
  manyCards: { count: number; days: number } | undefined;
  /** PERCENT of a topup spent within HOURS */
  rapidMovement: { percent: number; hours: number } | undefined;
  /** A day over FACTOR times the 90-day average day, and at least MINIMUM major units */
  unusualVolume: { factor: number; minimum: number } | undefined;
  /** COUNT refunds and credits within DAYS exceeding the captures */
  refundsOverCaptures: { count: number; days: number } | undefined;
  highRiskCountries: ReadonlySet<string>;
}

export function parseAmlSettings(config: {
  structuring: string;
  manyCards: string;
  rapidMovement: string;
  unusualVolume: string;
  refundsOverCaptures: string;
  highRiskCountries: string;
}): AmlSettings {
  const pair = <K extends string, L extends string>(text: string, a: K, b: L) => {
    const p = parsePair(text);
    return p ? ({ [a]: p.a, [b]: p.b } as Record<K | L, number>) : undefined;
  };
  return {
    structuring: parseStructuring(config.structuring),
    manyCards: pair(config.manyCards, 'count', 'days'),
    rapidMovement: pair(config.rapidMovement, 'percent', 'hours'),
    unusualVolume: pair(config.unusualVolume, 'factor', 'minimum'),
    refundsOverCaptures: pair(config.refundsOverCaptures, 'count', 'days'),
    highRiskCountries: parseCountries(config.highRiskCountries),
  };
}
