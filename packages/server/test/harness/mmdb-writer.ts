// A MaxMind DB file (the format of GeoLite2, DB-IP Lite, IPinfo Lite: maxmind.github.io/MaxMind-DB) written
// from a few IPv4 networks and their countries, for the tests of `ip_country`: the reader the server uses
// (mmdb-lib) reads it as it reads an operator's database, and no third party's data is in a test.
// IPv4 only, 24-bit records; each network's data is `{country: {iso_code}}`, as GeoLite2 Country has it.

type TreeRecord = { kind: 'empty' } | { kind: 'node'; index: number } | { kind: 'data'; offset: number };

/** Encodes a value in the format's data section (only the types a country database needs). */
function encode(value: unknown): Buffer {
  const control = (type: number, size: number) => {
    if (size >= 29) throw new Error('sizes from 29 up are not written here');
    return type <= 7 ? Buffer.from([(type << 5) | size]) : Buffer.from([size, type - 7]);
  };
  const unsigned = (type: number, n: bigint) => {
    const bytes: number[] = [];
    for (let v = n; v > 0n; v >>= 8n) bytes.unshift(Number(v & 0xffn));
    return Buffer.concat([control(type, bytes.length), Buffer.from(bytes)]);
  };
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, text.length), text]);
  }
  if (Array.isArray(value)) return Buffer.concat([control(11, value.length), ...value.map(encode)]);
  if (typeof value === 'object' && value !== null && 'uint' in value) {
    const { uint, bits } = value as { uint: bigint; bits: 16 | 32 | 64 };
    return unsigned(bits === 16 ? 5 : bits === 32 ? 6 : 9, uint);
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    return Buffer.concat([
      control(7, entries.length),
      ...entries.flatMap(([k, v]) => [encode(k), encode(v)]),
    ]);
  }
  throw new Error(`cannot encode ${String(value)}`);
}

const uint = (n: number | bigint, bits: 16 | 32 | 64) => ({ uint: BigInt(n), bits });

/** The file's bytes for these networks ('203.0.113.0/24' → 'AU'). */
export function countryMmdb(networks: Record<string, string>): Buffer {
  const nodes: [TreeRecord, TreeRecord][] = [[{ kind: 'empty' }, { kind: 'empty' }]];
  const data: Buffer[] = [];
  const offsets = new Map<string, number>();
  let size = 0;
  for (const [network, country] of Object.entries(networks)) {
    const [address = '', prefix = '32'] = network.split('/');
    const bits = address.split('.').reduce((n, octet) => (n << 8n) | BigInt(Number(octet)), 0n);
    let offset = offsets.get(country);
    if (offset === undefined) {
      const encoded = encode({ country: { iso_code: country } });
      offset = size;
      offsets.set(country, offset);
      data.push(encoded);
      size += encoded.length;
    }
    let node = 0;
    const length = Number(prefix);
    for (let i = 0; i < length; i++) {
      const side = Number((bits >> BigInt(31 - i)) & 1n) as 0 | 1;
      const pair = nodes[node] as [TreeRecord, TreeRecord];
      if (i === length - 1) {
        pair[side] = { kind: 'data', offset };
        break;
      }
      const next = pair[side];
      if (next.kind === 'node') node = next.index;
      else {
        nodes.push([{ kind: 'empty' }, { kind: 'empty' }]);
        pair[side] = { kind: 'node', index: nodes.length - 1 };
        node = nodes.length - 1;
      }
    }
  }
  const count = nodes.length;
  const value = (r: TreeRecord) =>
    r.kind === 'node' ? r.index : r.kind === 'empty' ? count : count + 16 + r.offset;
  const tree = Buffer.alloc(count * 6);
  nodes.forEach(([left, right], i) => {
    tree.writeUIntBE(value(left), i * 6, 3);
    tree.writeUIntBE(value(right), i * 6 + 3, 3);
  });
  const metadata = encode({
    binary_format_major_version: uint(2, 16),
    binary_format_minor_version: uint(0, 16),
    build_epoch: uint(Math.floor(Date.now() / 1000), 64),
    database_type: 'Tessera-Test-Country',
    description: { en: 'Networks of the tests' },
    ip_version: uint(4, 16),
    languages: ['en'],
    node_count: uint(count, 32),
    record_size: uint(24, 16),
  });
  return Buffer.concat([
    tree,
    Buffer.alloc(16),
    ...data,
    Buffer.from([0xab, 0xcd, 0xef]),
    Buffer.from('MaxMind.com', 'ascii'),
    metadata,
  ]);
}
