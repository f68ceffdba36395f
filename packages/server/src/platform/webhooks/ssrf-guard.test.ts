import { describe, expect, it } from 'vitest';
import { SsrfGuard } from './ssrf-guard.ts';

describe('SSRF guard', () => {
  const production = new SsrfGuard(true, ['hooks.internal', '10.20.0.0/16']);
  const sandbox = new SsrfGuard(false);

  it('refuses private, loopback, link-local and reserved targets in production', () => {
    for (const url of [
      'http://127.0.0.1/h',
      'http://localhost:8080/h',
      'http://10.0.0.5/h',
      'http://172.16.1.1/h',
      'http://192.168.1.10/h',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/h',
      'http://[fd00::1]/h',
      'http://[::ffff:127.0.0.1]/h',
      'http://0.0.0.0/h',
      'http://100.64.0.1/h',
    ]) {
      expect(production.checkUrl(url), url).toBeDefined();
    }
  });

  it('checks resolved addresses too (a public name resolving inward is caught)', () => {
    expect(production.checkAddress('10.0.0.1', 'evil.example.com')).toMatch(/private or reserved/);
    expect(production.checkAddress('93.184.216.34', 'example.com')).toBeUndefined();
  });

  it('lets allow-listed hosts and networks through', () => {
    expect(production.checkUrl('https://hooks.internal/x')).toBeUndefined();
    expect(production.checkAddress('10.0.0.1', 'hooks.internal')).toBeUndefined();
    expect(production.checkUrl('http://10.20.3.4/x')).toBeUndefined();
    expect(production.checkUrl('http://10.21.3.4/x')).toBeDefined();
  });

  it('refuses malformed URLs, other schemes and embedded credentials everywhere', () => {
    for (const guard of [production, sandbox]) {
      expect(guard.checkUrl('not a url')).toBe('is not a valid URL');
      expect(guard.checkUrl('ftp://example.com/x')).toBe('must use http or https');
      expect(guard.checkUrl('https://user:pass@example.com/x')).toBe('must not carry credentials');
    }
  });

  it('allows local receivers in the sandbox', () => {
    expect(sandbox.checkUrl('http://127.0.0.1:9999/hooks')).toBeUndefined();
    expect(sandbox.checkUrl('http://localhost/hooks')).toBeUndefined();
  });
});
