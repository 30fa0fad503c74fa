/**
 * The cost table of `bench/floor-cost.ts`: what each scenario spent, priced with AWS's published on-demand prices.
 */
import { RECEIVER_MEMORY_MIB } from '../infra/receiver.js';
import type { Scenario } from './cost-scenarios.js';
import { round, table, type Row } from './harness.js';

/**
 * AWS's published on-demand prices, US East (N. Virginia), USD, looked up on 2026-12-02; free tiers left out.
 * @see https://aws.amazon.com/dynamodb/pricing/on-demand/ (since the price cut of 2024-11-01)
 * @see https://aws.amazon.com/lambda/pricing/ (Arm, the first 7.5 billion GB-s a month; INIT billed since 2025-08-01)
 * @see https://aws.amazon.com/sns/pricing/ (standard topic publishes; deliveries are the subscriber's protocol's)
 */
export const PRICES = {
  region: 'us-east-1',
  date: '2026-12-02',
  writeRequestUnit: 0.625 / 1e6,
  readRequestUnit: 0.125 / 1e6,
  lambdaArmGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,
  snsPublish: 0.5 / 1e6,
} as const;

// Types, not interfaces: `minus` takes them as records of numbers.
export type Units = { rcu: number; wcu: number };
export type Billed = { invocations: number; billedMs: number; initMs: number };

/** What one scenario cost, in total. */
export interface Spent extends Units {
  scenario: Scenario;
  billed: Billed;
  prometheus: number;
  messages: { slack: number; feishu: number; sns: number };
  relay: Units;
  /** Answers not 200, by status. */
  refused: number[];
}

/** USD of what was spent: DynamoDB, Lambda (duration at the stack's memory size, requests), SNS publishes. */
function priced(s: Spent): { dynamodb: number; lambda: number; sns: number; total: number } {
  const gbSeconds = (s.billed.billedMs / 1000) * (RECEIVER_MEMORY_MIB / 1024);
  const dynamodb = s.wcu * PRICES.writeRequestUnit + s.rcu * PRICES.readRequestUnit;
  const lambda = gbSeconds * PRICES.lambdaArmGbSecond + s.billed.invocations * PRICES.lambdaRequest;
  const sns = s.messages.sns * PRICES.snsPublish;
  return { dynamodb, lambda, sns, total: dynamodb + lambda + sns };
}

const usd = (x: number) => `$${x >= 0.01 ? x.toFixed(2) : x.toPrecision(2)}`;

/** One scenario's line of the cost table, everything per 1,000 alerts received. */
function costRow(s: Spent): Row {
  const per = (x: number) => round((x * 1000) / s.scenario.alerts);
  const price = priced(s);
  const relayUnits = s.relay.rcu + s.relay.wcu;
  return {
    'per 1,000 alerts': `${s.scenario.name} (${s.scenario.alerts} alerts)`,
    'Lambda requests': per(s.billed.invocations),
    'Lambda billed ms': per(s.billed.billedMs),
    'RCU / WCU': `${per(s.rcu)} / ${per(s.wcu)}`,
    'units vs dedupe relay': relayUnits ? `${round((s.rcu + s.wcu) / relayUnits)}×` : '',
    'Prometheus requests': per(s.prometheus),
    'Slack / Feishu / SNS messages': `${per(s.messages.slack)} / ${per(s.messages.feishu)} / ${per(s.messages.sns)}`,
    'DynamoDB / Lambda / SNS': [price.dynamodb, price.lambda, price.sns].map((x) => usd(per(x))).join(' / '),
    'USD per 1,000': usd(per(price.total)),
    'USD per million alerts': usd(per(price.total) * 1000),
  };
}

export function costNotes(spent: Spent[]): string {
  const refused = spent.flatMap((s) => s.refused.map((status) => `${s.scenario.name}: ${status}`));
  const init = spent[0]!.billed.initMs;
  return (
    `\n### Cost per 1,000 alerts (shared path: the receiver's Lambda bundle, ${RECEIVER_MEMORY_MIB} MB arm64; ` +
    `AWS on-demand prices, ${PRICES.region}, ${PRICES.date})\n\n${table(spent.map(costRow))}\n\n` +
    spent.map((s) => `${s.scenario.name}: ${s.scenario.description}.`).join(' ') +
    `\nPrices: DynamoDB $${PRICES.writeRequestUnit * 1e6} per million write and $${PRICES.readRequestUnit * 1e6} per ` +
    `million read request units; Lambda Arm $${PRICES.lambdaArmGbSecond} per GB-s and $${PRICES.lambdaRequest * 1e6} ` +
    `per million requests (Function URLs cost nothing more); SNS $${PRICES.snsPublish * 1e6} per million publishes. ` +
    `Free tiers, storage, CloudWatch logs and SNS deliveries left out. A cold start adds its init, billed since ` +
    `2025-08-01: ${init} ms here, once per execution environment. Billed ms are this machine's wall time (noisy ` +
    `under load); the units and counts do not depend on it.` +
    (refused.length ? `\nAnswers other than 200: ${refused.join(', ')}.` : '')
  );
}

/** What the items the scenarios wrote weigh, by key space: a read is billed per 4 KB of the whole item. */
export function sizeNote(sizes: Map<string, number[]>): string {
  const rows = [...sizes].map(([space, all]) => {
    const sorted = [...all].sort((a, b) => a - b);
    return {
      items: `${space}#…`,
      count: sorted.length,
      'median bytes': sorted[sorted.length >> 1]!,
      'max bytes': sorted.at(-1)!,
      'over 4 KB': sorted.filter((b) => b > 4096).length,
    };
  });
  return (
    "\n### Item sizes after the cost scenarios (DynamoDB's size rules; a read costs 0.5 RCU per 4 KB of the whole " +
    `item, eventually consistent, whatever the projection)\n\n${table(rows)}\n\nThe stand-in Prometheus answers ` +
    'empty results, so the stored enrichment is at its smallest: real signals make the alert record larger.'
  );
}
