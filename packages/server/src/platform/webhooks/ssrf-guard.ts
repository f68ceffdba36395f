// Outbound URLs (webhooks, IPNs) must not reach the operator's own network: in production private,
// loopback, link-local and other special addresses are refused unless allow-listed. The check runs on
// the resolved address at connect time too, so a DNS answer that changes after validation is caught.
import { BlockList, isIP } from 'node:net';
import { DomainError } from '../errors/domain-error.ts';

const SPECIAL_V4: [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const SPECIAL_V6: [string, number][] = [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
];

const special = new BlockList();
for (const [net, prefix] of SPECIAL_V4) special.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of SPECIAL_V6) special.addSubnet(net, prefix, 'ipv6');

export class SsrfGuard {
  private readonly allowedHosts = new Set<string>();
  private readonly allowedNets = new BlockList();

  /**
   * @param isEnforced refuse special addresses (production); the sandbox talks to localhost receivers
   * @param allowlist hosts ("hooks.internal") or CIDRs ("10.1.0.0/16") that may be reached anyway
   */
  constructor(
    private readonly isEnforced: boolean,
    allowlist: string[] = [],
  ) {
    for (const entry of allowlist) {
      const [net, prefix] = entry.split('/');
      const family = net ? isIP(net) : 0;
      if (net && family) {
        const bits = prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix);
        this.allowedNets.addSubnet(net, bits, family === 4 ? 'ipv4' : 'ipv6');
      } else {
        this.allowedHosts.add(entry.toLowerCase());
      }
    }
  }

  /**
   * A webhook or callback URL from a request body: empty is none (null); a refused one is a 400 naming
   * the field.
   */
  checkWebhookUrl(url: string | null | undefined, field: string): string | null {
    if (url === undefined || url === null || url === '') return null;
    const problem = this.checkUrl(url);
    if (problem) throw new DomainError('validation_failed', `${field} ${problem}`, { field });
    return url;
  }

  /** Validates a URL given as configuration; answers a reason when it is refused. */
  checkUrl(text: string): string | undefined {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return 'is not a valid URL';
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must use http or https';
    if (url.username || url.password) return 'must not carry credentials';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) return this.checkAddress(host, host);
    if (
      this.isEnforced &&
      (host === 'localhost' || host.endsWith('.localhost')) &&
      !this.allowedHosts.has(host)
    ) {
      return 'must not point at a loopback host';
    }
    return undefined;
  }

  /** Checks a resolved address; hostname is what the URL named (for the host allowlist). */
  checkAddress(address: string, hostname: string): string | undefined {
    if (!this.isEnforced || this.allowedHosts.has(hostname.toLowerCase())) return undefined;
    const family = isIP(address);
    if (family === 0) return 'resolved to an invalid address';
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (this.allowedNets.check(address, type)) return undefined;
    const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] : undefined;
    if (special.check(address, type) || (mapped && special.check(mapped, 'ipv4'))) {
      return `resolves to a private or reserved address (${address})`;
    }
    return undefined;
  }
}
