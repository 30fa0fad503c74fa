/**
 * The PagerDuty storm store on dynalite through the real AWS SDK: members only grow, a storm closes when
 * its last member resolved (and says so again to a repeated resolve), a closed storm opened again starts
 * over, storms are kept per channel instance, and an expired storm reads as none; and what the channel
 * plans from it for an escalation (nothing for a storm's member, the alert's own trigger otherwise).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { DynamoDbPagerDutyStormStore, stormMemberId } from '../../../shared/store/pagerduty-storms.js';
import { planPagerDutyEvents } from '../../../shared/channels/pagerduty/storms.js';
import { fixtureNotification, stormNotification } from '../../helpers/notifications.js';

const NOW = Date.parse('2026-11-29T13:00:00Z');
const KEY = 'group/f4860e9e2ba9df08643fbfb0bc6603d6ba6f081f1d04af51b79b6cde74b54972';
const ids = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => stormMemberId(`s${from + i}/2026-11-29T12:42:23.143Z`));

let db: LocalDynamoDb;
let store: DynamoDbPagerDutyStormStore;
beforeAll(async () => {
  db = await startLocalDynamoDb('pagerduty-storms');
  store = new DynamoDbPagerDutyStormStore(db.client, { tableName: db.tableName, ttlSeconds: 3600 });
});
afterAll(async () => db.close());

describe('PagerDuty storm store', () => {
  it('closes when the last member resolves, in any batches, and a repeated resolve says closed again', async () => {
    await store.open('pd', KEY, ids(60), NOW);
    expect(await store.resolve('pd', KEY, ids(20), NOW)).toBe(false);
    expect(await store.resolve('pd', KEY, ids(20), NOW)).toBe(false);
    expect(await store.resolve('pd', KEY, ids(40, 20), NOW)).toBe(true);
    expect(await store.resolve('pd', KEY, ids(40, 20), NOW)).toBe(true);
    const stored = await store.get('pd', KEY, NOW);
    expect(stored?.members.size).toBe(60);
    expect(stored?.closedAt).toBe(new Date(NOW).toISOString());
    // Kept per instance.
    expect(await store.get('other-pd', KEY, NOW)).toBeUndefined();
  });

  it('a closed storm opened again starts over with the new members only', async () => {
    await store.open('pd', `${KEY}-2`, ids(3), NOW);
    expect(await store.resolve('pd', `${KEY}-2`, ids(3), NOW)).toBe(true);
    await store.open('pd', `${KEY}-2`, ids(2, 100), NOW + 1000);
    const stored = await store.get('pd', `${KEY}-2`, NOW + 1000);
    expect([...stored!.members].sort()).toEqual(ids(2, 100).sort());
    expect(stored!.resolved.size).toBe(0);
    expect(stored!.closedAt).toBeUndefined();
    expect(await store.resolve('pd', `${KEY}-2`, ids(1, 100), NOW + 1000)).toBe(false);
  });

  it('a storm it never opened, or one expired, is none: a resolve closes nothing', async () => {
    expect(await store.resolve('pd', `${KEY}-none`, ids(1), NOW)).toBe(false);
    await store.open('pd', `${KEY}-3`, ids(1), NOW);
    expect(await store.get('pd', `${KEY}-3`, NOW + 3_600_000)).toBeUndefined();
    expect(await store.resolve('pd', `${KEY}-3`, ids(1), NOW + 3_600_000)).toBe(false);
  });
});

describe('PagerDuty events of an escalation, with the storms kept', () => {
  it("a storm's member: nothing (PagerDuty holds the storm's alert); any other alert: its own trigger", async () => {
    const ctx = { store, channel: 'pd-escalation', now: () => NOW };
    const storm = stormNotification(60);
    const opened = await planPagerDutyEvents(storm, ctx);
    expect(opened.map((e) => e.event_action)).toEqual(['trigger']);
    const member = { ...storm, kind: 'escalation' as const, alerts: [storm.alerts[3]!] };
    expect(await planPagerDutyEvents(member, ctx)).toEqual([]);

    const alone = { ...fixtureNotification('firing-kv-cache-critical'), kind: 'escalation' as const };
    const [event, ...more] = await planPagerDutyEvents(alone, ctx);
    expect(more).toEqual([]);
    expect(event).toMatchObject({ event_action: 'trigger', dedup_key: '936e109b8c52c001/2026-11-29T12:42:23.143Z' });
  });
});
