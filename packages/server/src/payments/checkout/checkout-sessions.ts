// Session tokens (`GET /auth/session-token`, the real service's name): a short-lived token a merchant's
// server hands to its page so the embedded checkout form may show a customer's saved cards. It is a
// capability token over the site and its expiry: nothing is stored, and it cannot be forged, moved to
// another site or used after it expires.
import type { Clock } from '../../platform/clock/clock.ts';
import type { CapabilityTokens } from '../../platform/crypto/capability-tokens.ts';

export const SESSION_TOKEN_SECONDS = 15 * 60;

export class CheckoutSessions {
  constructor(private readonly deps: { capabilities: CapabilityTokens; clock: Clock }) {}

  issue(siteId: number): { token: string; expiresAt: Date } {
    const expiresAt = new Date(this.deps.clock.now().getTime() + SESSION_TOKEN_SECONDS * 1000);
    const id = `${siteId}:${Math.floor(expiresAt.getTime() / 1000)}`;
    return { token: this.deps.capabilities.issue('checkout-session', id), expiresAt };
  }

  /** The site the token was issued for, while it lasts. */
  siteOf(token: string): number | undefined {
    const id = this.deps.capabilities.open('checkout-session', token);
    const [site, expires] = (id ?? '').split(':').map(Number);
    if (!site || !expires || expires * 1000 <= this.deps.clock.now().getTime()) return undefined;
    return site;
  }
}
