/**
 * Item layout of the alert state in the dedupe table (partition key `pk`, TTL attribute `expiresAt`):
 * - `alert#<fingerprint>`: the record; `alertJson` and `enrichmentJson` hold the alert and its
 *   enrichment as JSON (DynamoDB numbers cannot be `NaN` or ±Infinity, which signals may be), `ack` and
 *   `escalation` are maps, `channels` a string set, `historySeq` the number of history items;
 * - `history#<fingerprint>#<seq, 10 digits>`: one history event (`eventJson`).
 * An over-long fingerprint appears in keys as its digest (`shared/dedupe/keys.ts`); the record's
 * `fingerprint` attribute keeps it whole.
 */
import type { Alert } from '../alertmanager/schema.js';
import { keyPart } from '../dedupe/keys.js';
import type { Enrichment } from '../enrich/types.js';
import type { Acknowledgement, AlertRecord, EscalationState, HistoryEvent } from './types.js';

export const recordKey = (fingerprint: string) => `alert#${keyPart(fingerprint)}`;
export const historyKey = (fingerprint: string, seq: number) => `history#${keyPart(fingerprint)}#${String(seq).padStart(10, '0')}`;

/** The stored shape of a record (what `GetItem` returns through the document client). */
export interface RecordItem {
  pk: string;
  fingerprint: string;
  startsAt: string;
  status: 'firing' | 'resolved';
  alertJson: string;
  enrichmentJson?: string;
  groupKey: string;
  externalURL: string;
  channels?: Set<string>;
  notifiedAt: string;
  resolvedAt?: string;
  ack?: Acknowledgement;
  escalation?: EscalationState;
  historySeq?: number;
  /** Epoch seconds. */
  expiresAt: number;
}

const NON_FINITE = '$number';

/** JSON that keeps `NaN` and ±Infinity (as `{"$number":"NaN"}`), which plain JSON turns into `null`. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? { [NON_FINITE]: String(v) } : v));
}

/** Reverses {@link toJson}. @throws SyntaxError on malformed JSON */
export function fromJson<T>(text: string): T {
  return JSON.parse(text, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const keys = Object.keys(v);
      const n = (v as Record<string, unknown>)[NON_FINITE];
      if (keys.length === 1 && typeof n === 'string') return Number(n);
    }
    return v;
  }) as T;
}

/** RFC 3339 with milliseconds, as `eventKey` normalises `startsAt`; unparsable input is kept as is. */
export function normaliseTime(rfc3339: string): string {
  const ms = Date.parse(rfc3339);
  return Number.isNaN(ms) ? rfc3339 : new Date(ms).toISOString();
}

export const isoTime = (ms: number) => new Date(ms).toISOString();

/** The record an item holds. */
export function fromItem(item: RecordItem): AlertRecord {
  const record: AlertRecord = {
    fingerprint: item.fingerprint,
    startsAt: item.startsAt,
    status: item.status,
    alert: fromJson<Alert>(item.alertJson),
    groupKey: item.groupKey,
    externalURL: item.externalURL,
    channels: item.channels ? [...item.channels].sort() : [],
    notifiedAt: item.notifiedAt,
  };
  if (item.enrichmentJson) record.enrichment = fromJson<Enrichment>(item.enrichmentJson);
  if (item.resolvedAt) record.resolvedAt = item.resolvedAt;
  if (item.ack) record.acknowledgement = { ...item.ack };
  if (item.escalation) record.escalation = { ...item.escalation };
  return record;
}

/** A history item's event. */
export function eventFromItem(item: { eventJson: string }): HistoryEvent {
  return fromJson<HistoryEvent>(item.eventJson);
}
