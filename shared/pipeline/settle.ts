/**
 * The settle stage: waits for the delivery ledger's writes, then frees the claims that still have
 * undelivered channels, so that Alertmanager's retry repairs them at once. A claim whose ledger write
 * failed keeps its lease: releasing it would let the retry re-send to the channels that already have the
 * alert. An unledgered alert holds no claim to release.
 */
import { releaseClaims } from './claim.js';
import type { GroupContext } from './context.js';

export async function settle(group: GroupContext): Promise<void> {
  const unrecorded = await group.ledger.settle();
  const undelivered = new Set(
    group.outcomes.flatMap((o) => (o.outcome && o.outcome.status !== 'delivered' ? [o.channel] : [])),
  );
  if (undelivered.size === 0) return;
  const release = group.toSend.filter(
    (c) =>
      !c.unledgered &&
      !unrecorded.has(c.claim.event.key) &&
      c.claim.pending.some((channel) => undelivered.has(channel)),
  );
  await releaseClaims(group, release);
}
