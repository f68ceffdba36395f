// Customer credentials of the issuing API. Access and two-factor session tokens are short-lived JWTs
// (HS256, key derived from the encryption key) checked against the injected clock; refresh tokens are
// opaque and live in the database (see auth-service.ts).
import { jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../../platform/clock/clock.ts';

/** Access token lifetime (default: 15 minutes) */
export const ACCESS_TTL_SECONDS = 15 * 60;
/** Refresh token lifetime (default: 30 days) */
export const REFRESH_TTL_SECONDS = 30 * 24 * 60 * 60;
/** Two-factor session token lifetime (default: 10 minutes) */
export const SESSION_TTL_SECONDS = 10 * 60;

const ISSUER = 'tessera-issuing';

export interface CustomerClaims {
  customerId: string;
  partnerId: string;
}

/** An access token belongs to one login (its refresh token family): revoking the login revokes it. */
export interface AccessClaims extends CustomerClaims {
  familyId: string;
}

export class TokenSigner {
  constructor(
    private readonly key: Uint8Array,
    private readonly clock: Clock,
  ) {}

  accessToken(claims: AccessClaims): Promise<string> {
    return this.sign(
      { typ: 'access', pid: claims.partnerId, fam: claims.familyId },
      claims.customerId,
      ACCESS_TTL_SECONDS,
    );
  }

  sessionToken(claims: CustomerClaims & { challengeId: string }): Promise<string> {
    return this.sign(
      { typ: '2fa', pid: claims.partnerId, sid: claims.challengeId },
      claims.customerId,
      SESSION_TTL_SECONDS,
    );
  }

  async verifyAccess(token: string): Promise<AccessClaims | undefined> {
    const payload = await this.verify(token, 'access');
    return payload && typeof payload.fam === 'string'
      ? { customerId: payload.sub, partnerId: payload.pid, familyId: payload.fam }
      : undefined;
  }

  async verifySession(token: string): Promise<(CustomerClaims & { challengeId: string }) | undefined> {
    const payload = await this.verify(token, '2fa');
    return payload && typeof payload.sid === 'string'
      ? { customerId: payload.sub, partnerId: payload.pid, challengeId: payload.sid }
      : undefined;
  }

  private sign(claims: Record<string, string>, subject: string, ttlSeconds: number): Promise<string> {
    const now = Math.floor(this.clock.now().getTime() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(subject)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .sign(this.key);
  }

  private async verify(
    token: string,
    typ: string,
  ): Promise<{ sub: string; pid: string; sid?: unknown; fam?: unknown } | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: ISSUER,
        algorithms: ['HS256'],
        currentDate: this.clock.now(),
      });
      if (payload.typ !== typ || typeof payload.sub !== 'string' || typeof payload.pid !== 'string')
        return undefined;
      return { sub: payload.sub, pid: payload.pid, sid: payload.sid, fam: payload.fam };
    } catch {
      return undefined;
    }
  }
}
