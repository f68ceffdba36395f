// Topup limits per customer and currency (daily and monthly), set per currency so each means about the
// same: 5,000 EUR a day and 20,000 EUR a month, rounded in each currency's own terms. A currency without
// limits is not offered for topups. TESSERA_TOPUP_LIMITS adds or replaces entries.

export interface TopupLimits {
  /** Major units */
  daily: bigint;
  monthly: bigint;
}

export const DEFAULT_TOPUP_LIMITS: Readonly<Record<string, TopupLimits>> = {
  EUR: { daily: 5_000n, monthly: 20_000n },
  USD: { daily: 5_000n, monthly: 20_000n },
  GBP: { daily: 4_000n, monthly: 16_000n },
  CHF: { daily: 5_000n, monthly: 20_000n },
  RON: { daily: 25_000n, monthly: 100_000n },
  BGN: { daily: 10_000n, monthly: 40_000n },
  PLN: { daily: 20_000n, monthly: 80_000n },
  CZK: { daily: 125_000n, monthly: 500_000n },
  HUF: { daily: 2_000_000n, monthly: 8_000_000n },
  SEK: { daily: 55_000n, monthly: 220_000n },
  NOK: { daily: 55_000n, monthly: 220_000n },
  DKK: { daily: 37_000n, monthly: 150_000n },
  CAD: { daily: 7_000n, monthly: 28_000n },
  AUD: { daily: 7_500n, monthly: 30_000n },
  JPY: { daily: 800_000n, monthly: 3_200_000n },
};

/**
 * Reads `CODE:daily:monthly` entries, comma-separated (`JPY:800000:3200000,ISK:700000:2800000`), over the
 * defaults. Throws with a message naming the entry.
 */
export function parseTopupLimits(text: string): Record<string, TopupLimits> {
  const limits: Record<string, TopupLimits> = { ...DEFAULT_TOPUP_LIMITS };
  for (const entry of text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const match = /^([A-Z]{3}):(\d{1,15}):(\d{1,15})$/.exec(entry);
    if (!match?.[1] || !match[2] || !match[3] || BigInt(match[2]) > BigInt(match[3])) {
      throw new Error(`"${entry}" is not CODE:daily:monthly with daily ≤ monthly`);
    }
    limits[match[1]] = { daily: BigInt(match[2]), monthly: BigInt(match[3]) };
  }
  return limits;
}
