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
