// The risk capability as the platform hands it to the APIs and the operator's tools (docs/risk.md): the
// rules, the lists, the engine that decides at each decision point, and the decision records.
import type { Logger } from 'pino';
import type { Clock } from '../clock/clock.ts';
import type { Db, Executor } from '../db/database.ts';
import type { Transact } from '../db/transact.ts';
import type { TenantCache } from '../tenants/tenant-cache.ts';
import {
  type BacktestOptions,
  type BacktestRequest,
  type BacktestResult,
  backtest,
  type DisputeLabels,
} from './backtest.ts';
import type { BacktestParts } from './backtest-parts.ts';
import { type DecisionPointName, type RuleOnObject, ruleOnObject } from './decision-points.ts';
import { type IpCountry, noIpCountry } from './ip-country.ts';
import { RiskReviews } from './reviews.ts';
import { RiskEngine } from './risk-engine.ts';
import { RiskLists } from './risk-lists.ts';
import { RiskRules, type RiskScope } from './risk-rules.ts';
import { TenantWindows } from './tenant-windows.ts';

export interface DecisionRecord extends RuleOnObject {
  action: string;
  mode: string;
  acted: boolean;
  attributes: Record<string, unknown>;
  at: Date;
}

export interface Risk {
  rules: RiskRules;
  lists: RiskLists;
  engine: RiskEngine;
  /** Each decision point's dispute labels, set by the API that owns it */
  labels: Map<DecisionPointName, DisputeLabels>;
  /** Payments held for a person (reviews.ts) */
  reviews: RiskReviews;
  /** The country of an IP address, from the operator's database (ip-country.ts) */
  ipCountry: IpCountry;
  /** A draft rule over a tenant's history (backtest.ts) */
  backtest(db: Db, request: BacktestRequest, options?: BacktestOptions): Promise<BacktestResult>;
  decisions(
    db: Executor,
    filter: { objectId?: string; ruleId?: string; tenants?: readonly RiskScope[] },
    page: { before?: string; limit: number },
  ): Promise<DecisionRecord[]>;
}

export function createRisk(deps: {
  clock: Clock;
  cache: TenantCache;
  logger: Pick<Logger, 'warn'>;
  db: Db;
  transact: Transact;
  /** Sandbox mode: its test values force outcomes (risk-engine.ts, SANDBOX_OUTCOMES) */
  sandbox: boolean;
  ipCountry?: IpCountry;
  /** Connections a long backtest is judged on in parts (backtest-parts.ts) */
  backtestParts?: BacktestParts;
  /** How long one backtest may run (TESSERA_BACKTEST_TIMEOUT_SECONDS) */
  backtestTimeoutMs?: number;
}): Risk {
  const lists = new RiskLists(deps);
  const tenantWindows = new TenantWindows();
  const rules = new RiskRules({
    ...deps,
    lists,
    prepareTenantWindows: async (tenant, point, features) => {
      try {
        await tenantWindows.read(deps.db, { tenant, point, at: deps.clock.now(), currency: '' }, features);
      } catch (err) {
        deps.logger.warn(
          { tenant, point, err: (err as Error).message },
          'a tenant’s windows were not rolled up ahead',
        );
      }
    },
  });
  const engine = new RiskEngine({
    rules,
    lists,
    logger: deps.logger,
    tenantWindows,
    sandboxOutcomes: deps.sandbox,
  });
  const labels = new Map<DecisionPointName, DisputeLabels>();
  return {
    rules,
    lists,
    engine,
    labels,
    reviews: new RiskReviews(deps),
    ipCountry: deps.ipCountry ?? noIpCountry,
    backtest: (db, request, options) =>
      backtest(
        db,
        {
          lists,
          labels: labels.get(request.decisionPoint),
          parts: deps.backtestParts,
          timeoutMs: deps.backtestTimeoutMs,
        },
        request,
        options,
      ),
    /** Newest first, a page before the last id seen; by object, rule or tenant (each index-backed). */
    async decisions(db, filter, page) {
      let query = db.selectFrom('risk_decisions').selectAll().orderBy('id', 'desc').limit(page.limit);
      if (filter.objectId) query = query.where('object_id', '=', filter.objectId);
      if (filter.ruleId) query = query.where('rule_id', '=', filter.ruleId);
      if (filter.tenants) query = query.where('tenant', 'in', filter.tenants);
      if (page.before) query = query.where('id', '<', page.before);
      const rows = await query.execute();
      return rows.map((row) => ({
        ...ruleOnObject(row),
        action: row.action,
        mode: row.mode,
        acted: row.acted,
        attributes: row.attributes,
        at: row.at,
      }));
    },
  };
}
