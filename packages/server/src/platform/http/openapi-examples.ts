// Examples for OpenAPI documents, made from each schema: every request body and answer gets one, with
// realistic values chosen by the field's name and format (an amount, a currency, an email, a card
// number of the sandbox, an id of the right shape) rather than placeholder text, so the reference shows
// what a call looks like and "try it" starts from a body that means something. Each string is the first
// candidate its schema accepts (pattern, format, length; checked with ajv), and an optional field no
// candidate fits is left out, so every example conforms to its schema.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

const ajv = new Ajv({ strict: false, validateFormats: true });
addFormats.default(ajv);
const fits = (schema: Schema, value: unknown): boolean => {
  try {
    return ajv.validate(schema as object, value);
  } catch {
    return false;
  }
};
type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  additionalProperties?: Schema | boolean;
  nullable?: boolean;
};

const BY_NAME: [RegExp, unknown][] = [
  [/^(currency|requested_currency)$/i, 'EUR'],
  [/^(email|invoiceEmail|recipient)$/i, 'ada@example.com'],
  [/^(country|cardHolderCountry|countryCode|nationality)$/i, 'RO'],
  [/^cardNumber$/, '4111111111111111'],
  [/^cardExpiryDate$/, '12/30'],
  [/^cardCvv$/, '123'],
  [/^(cardHolderName|nameOnCard)$/i, 'Ada Lovelace'],
  [/^firstName$|^first_name$/, 'Ada'],
  [/^lastName$|^last_name$/, 'Lovelace'],
  [/^(phone)$/i, '+40712345678'],
  [/^(city)$/i, 'Cluj-Napoca'],
  [/^(identifier)$/i, 'user-1001'],
  [/^(reference|externalOrderId|orderId)$/, 'order-1001'],
  [/^message$/, 'Success'],
  [/^(description|label|name|reason)$/i, 'Sandbox example'],
  [/^(walletAddress|refund_address)$/i, '0x52908400098527886E0F7030069857D2E4169EE7'],
  [/^(address|addressLine1|line1)$/i, 'Str. Memorandumului 28'],
  [/^(zipCode|postalCode)$/, '400114'],
  [/^password$/, 'Sandbox-Example-1'],
  [/^iban$/, 'RO49AAAA1B31007593840000'],
  [/^bic$/, 'AAAARO22'],
  [/^(holderName|holder_name)$/, 'Ada Lovelace SRL'],
  [/^occupation$/, 'Engineer'],
  [/^month$/, '2026-11'],
  // A time a link or offer runs until is in the future (a past one is refused, or already expired).
  [/^expiresAt$/, '2099-12-31T23:59:59.000Z'],
  [/^from$/, 'USDC'],
  [/^to$/, 'EUR'],
  [/^rate$/, '0.92'],
  [/^reasonCode$/, '13.1'],
  [/^tenant$/, 'site:2001'],
  [/^pin$/, '4827'],
  [/^(network|blockchain)$/i, 'ETH'],
  [/^(state|cardHolderState)$/, 'CA'],
];

const BY_FORMAT: Record<string, unknown> = {
  email: 'ada@example.com',
  uri: 'https://shop.example/return',
  url: 'https://shop.example/return',
  uuid: '3f0c8a2e-5b1d-4c7e-9a64-2d8f1e0b7c55',
  'date-time': '2026-11-24T10:30:00.000Z',
  date: '2026-11-24',
};

/** The example, only when the schema takes it (a parameter's example must conform). */
export function conformingExampleOf(schema: Schema, name: string): unknown {
  const example = exampleOf(schema, name);
  return example !== undefined && fits(schema, example) ? example : undefined;
}

export function exampleOf(schema: Schema | undefined, name = '', depth = 0): unknown {
  if (!schema || depth > 8) return undefined;
  if (schema.example !== undefined) return schema.example;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  const member = schema.anyOf?.[0] ?? schema.oneOf?.[0] ?? schema.allOf?.[0];
  if (member && !schema.type) {
    const nonNull = (schema.anyOf ?? schema.oneOf ?? []).find((s) => s.type !== 'null') ?? member;
    return exampleOf(nonNull, name, depth + 1);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        const value = exampleOf(child, key, depth + 1);
        const required = schema.required?.includes(key) ?? false;
        if (value !== undefined && (required || fits(child, value))) out[key] = value;
      }
      return out;
    }
    case 'array': {
      const item = exampleOf(schema.items, name.replace(/s$/, ''), depth + 1);
      return item === undefined ? [] : [item];
    }
    case 'integer':
      if (name === 'code') return 200;
      return /id$/i.test(name)
        ? 10001
        : schema.minimum !== undefined && schema.minimum > 1
          ? schema.minimum
          : 1;
    case 'number':
      return /amount|total|price|value/i.test(name) ? 10.9 : 1;
    case 'boolean':
      return typeof schema.default === 'boolean' ? schema.default : true;
    case 'string':
      return stringExample(schema, name);
    default:
      // A schema that allows anything (an event's payload, say).
      return schema.type === undefined && !schema.anyOf && !schema.oneOf && !schema.allOf ? {} : undefined;
  }
}

const PATTERNED = [
  '123456',
  '1234',
  '0x52908400098527886E0F7030069857D2E4169EE7',
  'c2FuZGJveCBleGFtcGxl',
  '203.0.113.7',
  '1990-12-10',
  '20261124103000',
  '05',
  '2026-11',
];

function stringExample(schema: Schema, name: string): string {
  const byName = BY_NAME.find(([re]) => re.test(name))?.[1];
  const candidates = [
    schema.default,
    byName,
    schema.format ? BY_FORMAT[schema.format] : undefined,
    /(amount|total|price|value|shipping|tax|discount|fee)$/i.test(name) ? '10.90' : undefined,
    /id$/i.test(name)
      ? `${name.replace(/Id$/, '').slice(0, 4) || 'obj'}_01JD3Q8Z9X0000000000000000`
      : undefined,
    /token|key|secret/i.test(name) ? 'eyJhbGciOiJIUzI1NiJ9.sandbox.example' : undefined,
    /url$|uri$|link$/i.test(name) ? 'https://sandbox.tessera.example/hosted/page' : undefined,
    /^(orderStatus|transactionStatus)$/.test(name) ? 'complete-ok' : undefined,
    /status$/i.test(name) ? 'active' : undefined,
    /(At|Date|_at)$/.test(name) ? '2026-11-24T10:30:00.000Z' : undefined,
    'example',
    '10.90',
    '10001',
    ...PATTERNED,
    'EUR',
  ].filter((c): c is string => typeof c === 'string');
  return candidates.find((c) => fits({ ...schema, type: 'string' }, c)) ?? candidates[0] ?? 'example';
}
