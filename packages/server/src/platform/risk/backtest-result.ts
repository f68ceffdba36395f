// A backtest's answer (backtest.ts): its totals, the sample and, for tests, the matched ids, as a query
// judged in the database returns them, or as the slices of one judged in parts add up.

export interface BacktestResult {
  evaluated: number;
  matched: number;
  /** The matched objects' amounts, minor units by currency */
  matchedAmounts: Record<string, bigint>;
  /** Disputed later: of the matched, and of all evaluated */
  disputed: { matched: number; all: number };
  fraud: { matched: number; all: number };
  /** Evaluations that failed (a division by zero): not matched */
  failed: number;
  /** In the database (the rule's exact SQL, rule-sql.ts), or each signal by CEL in the process */
  judgedIn: 'database' | 'process';
  /** Slices of the period judged at once, each on its own connection (backtest-parts.ts); 1 when not cut */
  parts: number;
  sample: { objectId: string; at: Date; amount: bigint; currency: string }[];
  /** The matched objects' ids when asked for (tests compare them with a rule's decisions) */
  matchedIds?: string[];
}

export const emptyResult = (
  judgedIn: 'database' | 'process',
  options: { keepIds?: boolean },
): BacktestResult => ({
  judgedIn,
  parts: 1,
  evaluated: 0,
  matched: 0,
  matchedAmounts: {},
  disputed: { matched: 0, all: 0 },
  fraud: { matched: 0, all: 0 },
  failed: 0,
  sample: [],
  ...(options.keepIds ? { matchedIds: [] } : {}),
});

/** What a query judged in the database returns (backtest.ts, judgedInDatabase) */
export interface JudgedRow {
  totals: TotalsRow[] | null;
  sample: { object_id: string; at: string; amount: string; currency: string }[] | null;
  matched_ids: string[] | null;
}

export function resultOf(row: JudgedRow | undefined, options: { keepIds?: boolean }): BacktestResult {
  const result = emptyResult('database', options);
  for (const t of row?.totals ?? []) {
    result.evaluated += t.evaluated;
    result.matched += t.matched;
    result.failed += t.failed;
    if (t.matched > 0) result.matchedAmounts[t.currency] = BigInt(t.matched_amount);
    result.disputed.all += t.disputed;
    result.disputed.matched += t.disputed_matched;
    result.fraud.all += t.fraud;
    result.fraud.matched += t.fraud_matched;
  }
  result.sample = (row?.sample ?? []).map((s) => ({
    objectId: s.object_id,
    at: new Date(s.at),
    amount: BigInt(s.amount),
    currency: s.currency,
  }));
  if (options.keepIds) result.matchedIds = row?.matched_ids ?? [];
  return result;
}

/** The slices' results, in time order, as one: totals added, the sample the first matched of them all */
export function mergedParts(parts: readonly BacktestResult[], sampleSize: number): BacktestResult {
  const [first, ...rest] = parts;
  if (!first) throw new Error('a backtest in parts has at least one part');
  const merged = { ...structuredClone(first), parts: parts.length };
  for (const part of rest) {
    merged.evaluated += part.evaluated;
    merged.matched += part.matched;
    merged.failed += part.failed;
    for (const [currency, amount] of Object.entries(part.matchedAmounts)) {
      merged.matchedAmounts[currency] = (merged.matchedAmounts[currency] ?? 0n) + amount;
    }
    for (const key of ['disputed', 'fraud'] as const) {
      merged[key].matched += part[key].matched;
      merged[key].all += part[key].all;
    }
    merged.sample.push(...part.sample.slice(0, sampleSize - merged.sample.length));
    merged.matchedIds?.push(...(part.matchedIds ?? []));
  }
  return merged;
}

interface TotalsRow {
  currency: string;
  evaluated: number;
  matched: number;
  failed: number;
  matched_amount: string;
  disputed: number;
  disputed_matched: number;
  fraud: number;
  fraud_matched: number;
}
