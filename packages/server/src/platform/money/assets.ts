// The asset registry: every currency Tessera can hold, with the scale its minor units use.
// Fiat exponents are ISO 4217's (not CLDR's display digits: ISO says HUF has 2, CLDR shows 0).

export type AssetKind = 'fiat' | 'crypto';

export interface Network {
  /** Network code as the crypto API shows it (`blockchain`) */
  code: string;
  name: string;
  /** Decimals of the asset's on-chain representation on this network */
  onChainDecimals: number;
  /** Confirmations after which a payment counts as final */
  confirmationsRequired: number;
  /** Simulated seconds between blocks */
  blockTimeSeconds: number;
}

export interface Asset {
  code: string;
  kind: AssetKind;
  /** Digits after the decimal point; amounts are stored as integers of 10^-exponent */
  exponent: number;
  networks: readonly Network[];
}

const ZERO_DECIMAL = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF'.split(' ');
const THREE_DECIMAL = 'BHD IQD JOD KWD LYD OMR TND'.split(' ');
const FOUR_DECIMAL = 'CLF UYW'.split(' ');
const TWO_DECIMAL = (
  'AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF ' +
  'CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ ' +
  'GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD ' +
  'MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON ' +
  'RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS ' +
  'UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG'
).split(' ');

const fiat = (code: string, exponent: number): Asset => ({ code, kind: 'fiat', exponent, networks: [] });

const net = (
  code: string,
  name: string,
  onChainDecimals: number,
  confirmationsRequired: number,
  blockTimeSeconds: number,
): Network => ({
  code,
  name,
  onChainDecimals,
  confirmationsRequired,
  blockTimeSeconds,
});

const CRYPTO: Asset[] = [
  { code: 'BTC', kind: 'crypto', exponent: 8, networks: [net('BTC', 'Bitcoin', 8, 3, 600)] },
  { code: 'ETH', kind: 'crypto', exponent: 18, networks: [net('ETH', 'Ethereum', 18, 12, 12)] },
  {
    code: 'USDC',
    kind: 'crypto',
    exponent: 6,
    networks: [
      net('ETH', 'Ethereum', 6, 12, 12),
      net('POLYGON', 'Polygon PoS', 6, 64, 2),
      net('SOL', 'Solana', 6, 32, 1),
    ],
  },
  {
    code: 'USDT',
    kind: 'crypto',
    exponent: 6,
    networks: [
      net('ETH', 'Ethereum', 6, 12, 12),
      net('TRON', 'Tron', 6, 19, 3),
      net('BSC', 'BNB Smart Chain', 18, 15, 3),
    ],
  },
];

const REGISTRY: ReadonlyMap<string, Asset> = new Map(
  [
    ...ZERO_DECIMAL.map((c) => fiat(c, 0)),
    ...TWO_DECIMAL.map((c) => fiat(c, 2)),
    ...THREE_DECIMAL.map((c) => fiat(c, 3)),
    ...FOUR_DECIMAL.map((c) => fiat(c, 4)),
    ...CRYPTO,
  ].map((asset) => [asset.code, asset]),
);

/** The asset with this code (upper case), or undefined when Tessera does not know it. */
export function findAsset(code: string): Asset | undefined {
  return REGISTRY.get(code);
}

/** The asset of a code already stored (a record's currency): an unknown one is a bug, not a client's error. */
export function knownAsset(code: string): Asset {
  const asset = findAsset(code);
  if (!asset) throw new Error(`unknown asset ${code}`);
  return asset;
}

export function isFiat(code: string): boolean {
  return REGISTRY.get(code)?.kind === 'fiat';
}

export function listAssets(kind?: AssetKind): Asset[] {
  return [...REGISTRY.values()].filter((a) => kind === undefined || a.kind === kind);
}

export function findNetwork(assetCode: string, networkCode: string): Network | undefined {
  return REGISTRY.get(assetCode)?.networks.find((n) => n.code === networkCode);
}
