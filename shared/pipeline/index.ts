/**
 * The pipeline for one Alertmanager webhook message, as Alertmanager's notify pipeline is: a few named
 * stages in order, each in its own file, each taking the group's context (`context.ts`) and adding its
 * result to it:
 *
 *   claim → refire → flap → enrich → fan out → settle → record
 *
 * - claim (`claim.ts`): route each alert and claim its event in the dedupe ledger, for the channels its
 *   route selects; enrichment of the alerts read as new starts meanwhile;
 * - refire (`refire.ts`): settle with the source of truth the claims of alerts firing again after their
 *   announced resolve; name the alerts some channel still lacks;
 * - flap (`flap.ts`): mark the alerts firing again within the flap window;
 * - enrich (`enrich.ts`): fresh values, a likely cause, a forecast, and who acknowledged;
 * - fan out (`fan-out.ts`): one message per channel with the alerts it lacks; each channel's success goes
 *   to the delivery ledger as soon as it happens (`ledger.ts`);
 * - settle (`settle.ts`): wait for the ledger, free the claims of channels that failed;
 * - record (`record.ts`): the alert records and their history, escalation.
 * One bad alert never blocks its group: oversized or invalid text is cut before fan-out
 * (`shared/render/reduce.ts`), an alert the store refuses is sent without dedupe.
 */
import { onePerFingerprint } from '../alertmanager/repeats.js';
import type { WebhookMessage } from '../alertmanager/schema.js';
import { claim } from './claim.js';
import { GroupContext, type GroupResult, type PipelineDeps } from './context.js';
import { enrich } from './enrich.js';
import { fanOut } from './fan-out.js';
import { flap } from './flap.js';
import { groupLedger } from './ledger.js';
import { record } from './record.js';
import { refire } from './refire.js';
import { settle } from './settle.js';

export type { GroupResult, PipelineDeps } from './context.js';

/**
 * Runs one webhook message through the pipeline.
 * @throws the dedupe store's error when DynamoDB is unreachable (nothing was sent; answer 5xx)
 */
export async function processGroup(message: WebhookMessage, deps: PipelineDeps): Promise<GroupResult> {
  const { alerts, repeated } = onePerFingerprint(message.alerts);
  const group = new GroupContext({ ...message, alerts: [...alerts] }, deps, groupLedger, message.alerts.length);
  const { status, truncatedAlerts } = message;
  group.log.info('group received', { status, alerts: message.alerts.length, truncatedAlerts });
  if (repeated.length > 0) {
    // Not Alertmanager's doing: a sender or proxy to look at. The newest state of each is processed.
    group.log.warn('alert repeated in one webhook', { repeated: repeated.length, fingerprints: repeated.slice(0, 10) });
  }
  await claim(group);
  await refire(group);
  flap(group);
  await enrich(group);
  await fanOut(group);
  await settle(group);
  await record(group);
  return group.result();
}
