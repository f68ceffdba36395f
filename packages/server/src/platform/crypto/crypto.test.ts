import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CapabilityTokens } from './capability-tokens.ts';
import { Encryptor, parseEncryptionKey } from './encryption.ts';
import { hashPassword, hashToken, randomAlphanumeric, verifyPassword } from './hashing.ts';
import { loadOrCreateSandboxSecrets } from './sandbox-secrets.ts';

describe('encryption at rest', () => {
  const encryptor = new Encryptor(randomBytes(32));

  it('round-trips and never repeats a ciphertext', () => {
    const a = encryptor.encrypt('4111111111111111', 'card:1');
    const b = encryptor.encrypt('4111111111111111', 'card:1');
    expect(a).not.toBe(b);
    expect(a).not.toContain('4111');
    expect(encryptor.decrypt(a, 'card:1')).toBe('4111111111111111');
  });

  it('never repeats a nonce, across many refills of the random pool', () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const sealed = encryptor.encrypt(`value ${i}`, 'row');
      nonces.add(sealed.split(':')[1] as string);
      if (i % 97 === 0) expect(encryptor.decrypt(sealed, 'row')).toBe(`value ${i}`);
    }
    expect(nonces.size).toBe(2_000);
  });

  it('refuses a ciphertext moved to another row, tampered, or under another key', () => {
    const sealed = encryptor.encrypt('secret', 'card:1');
    expect(() => encryptor.decrypt(sealed, 'card:2')).toThrow();
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith('A') ? 'B' : 'A'}A`;
    expect(() => encryptor.decrypt(tampered, 'card:1')).toThrow();
    expect(() => new Encryptor(randomBytes(32)).decrypt(sealed, 'card:1')).toThrow();
    expect(() => encryptor.decrypt('v9:x:y')).toThrow(/unknown ciphertext format/);
  });

  it('accepts 32-byte keys as hex or base64 only', () => {
    expect(parseEncryptionKey('ab'.repeat(32))).toHaveLength(32);
    expect(parseEncryptionKey(randomBytes(32).toString('base64'))).toHaveLength(32);
    expect(() => parseEncryptionKey('too-short')).toThrow(/32 bytes/);
  });
});

describe('hashing', () => {
  it('hashes tokens deterministically and passwords with a salt', async () => {
    expect(hashToken('ptk_x')).toBe(hashToken('ptk_x'));
    expect(hashToken('ptk_x')).not.toBe(hashToken('ptk_y'));
    const a = await hashPassword('Str0ng!pass');
    expect(a).toMatch(/^\$argon2id\$/);
    expect(await hashPassword('Str0ng!pass')).not.toBe(a);
    expect(await verifyPassword(a, 'Str0ng!pass')).toBe(true);
    expect(await verifyPassword(a, 'wrong')).toBe(false);
    expect(await verifyPassword('not-a-hash', 'x')).toBe(false);
  });

  it('draws uniform alphanumerics of the asked length', () => {
    const text = randomAlphanumeric(5000);
    expect(text).toMatch(/^[A-Za-z0-9]{5000}$/);
    expect(new Set(text).size).toBe(62);
  });
});

describe('sandbox secrets', () => {
  it('are created once, whole, when several processes start together', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-secrets-'));
    try {
      const all = await Promise.all(Array.from({ length: 12 }, () => loadOrCreateSandboxSecrets(dir)));
      expect(new Set(all.map((s) => s.adminToken)).size).toBe(1);
      expect((await stat(join(dir, 'secrets.json'))).mode & 0o777).toBe(0o600);
      expect((await readdir(dir)).sort()).toEqual(['secrets.json']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('capability tokens', () => {
  it('name their object, and cannot be forged, altered or used for another purpose', () => {
    const tokens = new CapabilityTokens(randomBytes(32));
    const token = tokens.issue('topup-page', 'top_01ABC');
    expect(tokens.open('topup-page', token)).toBe('top_01ABC');
    expect(tokens.open('kyc-session', token)).toBeUndefined();
    expect(tokens.open('topup-page', token.replace('top_01ABC', 'top_01ABD'))).toBeUndefined();
    // The last character changed (to another one: 'A' is a possible last character of a real MAC).
    expect(
      tokens.open('topup-page', `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`),
    ).toBeUndefined();
    expect(new CapabilityTokens(randomBytes(32)).open('topup-page', token)).toBeUndefined();
    for (const junk of ['', '.', 'no-dot', `${'x'.repeat(300)}.y`])
      expect(tokens.open('topup-page', junk)).toBeUndefined();
  });
});
