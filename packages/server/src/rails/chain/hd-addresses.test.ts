// Published vectors: BIP84's own (mnemonic "abandon … about"), the EVM addresses every wallet derives
// from the same mnemonics (m/44'/60'/0'/0/i; "test … junk" is anvil's and Hardhat's default accounts),
// and EIP-55's checksum examples.
import { pbkdf2Sync } from 'node:crypto';
import { HDKey } from '@scure/bip32';
import { describe, expect, it } from 'vitest';
import {
  AccountKey,
  bip84DepositAddress,
  ExtendedKeyError,
  evmDepositAddress,
  toChecksumAddress,
} from './hd-addresses.ts';

const ABANDON = `${'abandon '.repeat(11)}about`;
const TEST_JUNK = `${'test '.repeat(11)}junk`;

/** BIP39: the seed is PBKDF2-HMAC-SHA512 of the mnemonic, salt "mnemonic" + passphrase, 2048 rounds. */
function seedOf(mnemonic: string): Uint8Array {
  return pbkdf2Sync(mnemonic.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512');
}

const ZPUB = { public: 0x04b24746, private: 0x04b2430c };

describe('deposit addresses from an extended public key', () => {
  it('BIP84: the published account zpub and its first receive addresses', () => {
    const account = HDKey.fromMasterSeed(seedOf(ABANDON), ZPUB).derive("m/84'/0'/0'");
    expect(account.publicExtendedKey).toBe(
      'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs',
    );
    const key = AccountKey.parse(account.publicExtendedKey);
    expect(bip84DepositAddress(key, 0)).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(bip84DepositAddress(key, 1)).toBe('bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g');
  });

  it('EVM: the addresses wallets derive at m/44’/60’/0’/0/i, in EIP-55 form', () => {
    const accountXpub = (mnemonic: string) =>
      HDKey.fromMasterSeed(seedOf(mnemonic)).derive("m/44'/60'/0'").publicExtendedKey;
    const junk = AccountKey.parse(accountXpub(TEST_JUNK));
    expect([0, 1, 2].map((i) => evmDepositAddress(junk, i))).toEqual([
      '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
      '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    ]);
    expect(evmDepositAddress(AccountKey.parse(accountXpub(ABANDON)), 0)).toBe(
      '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
    );
  });

  it('EIP-55 checksums', () => {
    for (const address of [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    ]) {
      expect(toChecksumAddress(address.toLowerCase())).toBe(address);
    }
  });

  it('refuses a private key, a key at the wrong depth, and what does not decode', () => {
    const root = HDKey.fromMasterSeed(seedOf(TEST_JUNK));
    const account = root.derive("m/44'/60'/0'");
    expect(() => AccountKey.parse(account.privateExtendedKey)).toThrow(/private key/);
    expect(() => AccountKey.parse(root.publicExtendedKey)).toThrow(/depth 0.*account-level/);
    expect(() => AccountKey.parse(root.derive("m/44'/60'/0'/0").publicExtendedKey)).toThrow(/depth 4/);
    expect(() => AccountKey.parse(`${account.publicExtendedKey.slice(0, -1)}x`)).toThrow(ExtendedKeyError);
    expect(() => AccountKey.parse('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')).toThrow(/not an extended/);
    const key = AccountKey.parse(account.publicExtendedKey);
    expect(() => evmDepositAddress(key, -1)).toThrow(RangeError);
    expect(() => evmDepositAddress(key, 2 ** 31)).toThrow(RangeError);
  });
});
