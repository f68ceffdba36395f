// Compliance (docs/compliance.md): the sanctions lists, the screening of everyone on the other side, and
// the alerts, cases and holds a compliance officer works, built once for every API.
import type { Logger } from 'pino';
import type { Clock } from '../clock/clock.ts';
import type { Encryptor } from '../crypto/encryption.ts';
import type { Db } from '../db/database.ts';
import type { TenantCache } from '../tenants/tenant-cache.ts';
import type { AmlSettings } from './aml-scenarios.ts';
import { BusinessProfiles, type OnboardingRequirement } from './business-profiles.ts';
import { ComplianceCases, type FourEyesPolicy } from './compliance-cases.ts';
import { ComplianceHolds } from './compliance-holds.ts';
import type { GoamlSettings } from './goaml-report.ts';
import { PartyScreening } from './party-screening.ts';
import { ProfileDocuments } from './profile-documents.ts';
import { SanctionsInbox } from './sanctions-inbox.ts';
import { SanctionsLists } from './sanctions-lists.ts';

export interface Compliance {
  sanctions: SanctionsLists;
  /** The APIs register how a subject of theirs is held (`customer`, `site`, `store`) */
  holds: ComplianceHolds;
  cases: ComplianceCases;
  screening: PartyScreening;
  /** List files dropped into TESSERA_SANCTIONS_INBOX_DIR, imported by a sweep */
  inbox: SanctionsInbox;
  /** Merchants' and stores' business profiles and their review (KYB) */
  profiles: BusinessProfiles;
  /** The profiles' documents, kept encrypted */
  documents: ProfileDocuments;
  /** The monitoring scenarios' settings (TESSERA_AML_*; each undefined when off) */
  aml: AmlSettings;
  /** goAML's reporting entity (TESSERA_GOAML_*), null until the operator configures it */
  goaml: GoamlSettings | null;
}

export function createCompliance(deps: {
  db: Db;
  clock: Clock;
  cache: TenantCache;
  logger: Logger;
  threshold: number;
  inboxDir: string;
  onboarding: OnboardingRequirement;
  aml: AmlSettings;
  fourEyes: FourEyesPolicy;
  encryptor: Encryptor;
  goaml: GoamlSettings | null;
}): Compliance {
  const { db, clock, cache, threshold } = deps;
  const sanctions = new SanctionsLists({ clock, cache, threshold });
  const holds = new ComplianceHolds(clock);
  const cases = new ComplianceCases({ clock, holds, fourEyes: deps.fourEyes });
  const screening = new PartyScreening({
    db,
    clock,
    sanctions,
    cases,
    highRiskCountries: deps.aml.highRiskCountries,
  });
  const inbox = new SanctionsInbox({ db, sanctions, logger: deps.logger, inboxDir: deps.inboxDir });
  const profiles = new BusinessProfiles({ clock, screening, requirement: deps.onboarding });
  return {
    sanctions,
    holds,
    cases,
    screening,
    inbox,
    profiles,
    documents: new ProfileDocuments({ clock, encryptor: deps.encryptor }),
    aml: deps.aml,
    goaml: deps.goaml,
  };
}
