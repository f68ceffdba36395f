// Which of the merchant's sites a request means (spec: `siteId` is mandatory when the merchant has more
// than one site). A site of another merchant is refused like an unknown one.
import { DomainError } from '../platform/errors/domain-error.ts';
import type { MerchantScope } from './http/authenticate.ts';

export function siteOf(merchant: MerchantScope, siteId: number | undefined, field = 'siteId'): number {
  if (siteId === undefined) {
    const [only, ...others] = merchant.siteIds;
    if (only === undefined || others.length > 0) {
      throw new DomainError('validation_failed', 'siteId is required when the merchant has several sites', {
        field,
      });
    }
    return only;
  }
  if (!merchant.siteIds.includes(siteId)) {
    throw new DomainError('validation_failed', 'siteId is not one of your sites', { field });
  }
  return siteId;
}
