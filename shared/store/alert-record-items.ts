/**
 * Item layout of the alert state in the dedupe table (partition key `pk`, TTL attribute `expiresAt`):
 * - `alert#<fingerprint>`: the record; `alertJson` and `enrichmentJson` hold the alert and its
 *   enrichment as JSON (DynamoDB numbers cannot be `NaN` or ±Infinity, which signals may be), `ack` and
 *   `escalation` are maps, `channels` a string set, `historySeq` the number of history items;
 *   `deliveredEvent` the key of the alert event (`generationKey`) whose claimed channels all accepted it,
 *   written by the same request as the rest of the record (`delivery-mark.ts`: the dedupe ledger reads it);
 *   `runCount` and `runSince`, the flap run of its firing (`flap-record.ts`); `notifiedEventJson` and
 *   `notifiedEventSeq`, the `notified` history event of the write that started the occurrence;
 * - `history#<fingerprint>#<seq, 10 digits>`: one history event (`eventJson`).
 * An over-long fingerprint appears in keys as its digest (`shared/store/keys.ts`); the record's
 * `fingerprint` attribute keeps it whole.
 */
import type { Alert } from '../alertmanager/schema.js';
import { keyPart } from './keys.js';
import type { Enrichment } from '../enrich/types.js';
import { restoredEnrichment, storedEnrichment, type StoredEnrichment } from '../enrich/stored.js';
import { cutAlert, cutText } from '../render/reduce.js';
import { utf8Bytes } from '../core/truncate.js';
import type { Acknowledgement, AlertRecord, EscalationState, HistoryEvent } from './alert-record.js';

/** The key prefix of every alert record (its key space, `write-epoch.ts`). */
export const RECORD_SPACE = 'alert#';
export const recordKey = (fingerprint: string) => `${RECORD_SPACE}${keyPart(fingerprint)}`;
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
  /** The occurrence's generation (`shared/dedupe/occurrence.ts`), once it fired again; absent: 0. */
  generation?: number;
  /** When the current generation fired again (RFC 3339, our clock); absent for generation 0. */
  refiredAt?: string;
  /** Key of the event every claimed channel accepted (`delivery-mark.ts`); absent in records written before it existed. */
  deliveredEvent?: string;
  /** The flap run of the occurrence's firing (`flap-record.ts`, `runFromRecord`): firings in it, and its first `startsAt` (epoch ms). */
  runCount?: number;
  runSince?: number;
  /**
   * The `notified` history event of the write that started this occurrence (`recordNotified`'s new-occurrence
   * write, or a batch's whole put, `recordManyNotified`): kept in the record instead of a history item of its
   * own, as event number `notifiedEventSeq` (the history reader takes it from here). The next new occurrence's
   * write moves it to its history item (`history#<fingerprint>#<notifiedEventSeq>`).
   */
  notifiedEventJson?: string;
  notifiedEventSeq?: number;
  /** Epoch seconds. */
  expiresAt: number;
}

/**
 * Most bytes of alert and enrichment JSON a record holds. DynamoDB refuses an item over 400 KB
 * (attribute names and values, UTF-8); the rest of the record (channels, ack, escalation) is small,
 * but a record that cannot be written cannot be acknowledged.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items
 */
export const MAX_RECORD_JSON_BYTES = 256 * 1024;
/** Longest `groupKey` or `externalURL` kept in a record, UTF-8 bytes (the group key repeats the group's labels). */
export const MAX_RECORD_TEXT_BYTES = 1024;
/** Per-field sizes tried, largest first, when an alert's JSON is over its share of the record, bytes. */
const FIT_FIELD_BYTES = [4096, 1024, 256, 64];

/**
 * The `alertJson` of a record: the alert as notified, its values cut further (and named in its `cut`)
 * while alert and enrichment JSON together are over {@link MAX_RECORD_JSON_BYTES}.
 * @param enrichmentJson the enrichment as stored, if any
 * @returns JSON that fits unless the alert has thousands of fields (the write then fails, for this alert only)
 */
export function alertJsonForRecord(alert: Alert, enrichmentJson = ''): string {
  const room = MAX_RECORD_JSON_BYTES - utf8Bytes(enrichmentJson);
  let json = toJson(alert);
  for (const maxBytes of FIT_FIELD_BYTES) {
    if (utf8Bytes(json) <= room) break;
    json = toJson(cutAlert(alert, maxBytes));
  }
  return json;
}

/**
 * The `alertJson` and `enrichmentJson` of a record: the enrichment as stored (`storedEnrichment`:
 * queries the alert's labels rebuild are left out), unless the alert had to be cut to fit, whose
 * labels would then no longer rebuild them (every query is stored then).
 */
export function recordJsons(alert: Alert, enrichment: Enrichment | undefined): { alertJson: string; enrichmentJson?: string } {
  if (!enrichment) return { alertJson: alertJsonForRecord(alert) };
  const stored = toJson(storedEnrichment(enrichment, alert));
  const alertJson = alertJsonForRecord(alert, stored);
  if (alertJson === toJson(alert)) return { alertJson, enrichmentJson: stored };
  const whole = toJson(enrichment);
  return { alertJson: alertJsonForRecord(alert, whole), enrichmentJson: whole };
}

/** A group key or external URL as a record keeps it (see {@link MAX_RECORD_TEXT_BYTES}). */
export const recordText = (text: string): string => cutText(text, MAX_RECORD_TEXT_BYTES);

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
  if (item.enrichmentJson) lazyEnrichment(record, item.enrichmentJson);
  if (item.resolvedAt) record.resolvedAt = item.resolvedAt;
  if (item.ack) record.acknowledgement = { ...item.ack };
  if (item.escalation) record.escalation = { ...item.escalation };
  if (item.generation) record.generation = item.generation;
  if (item.refiredAt) record.refiredAt = item.refiredAt;
  return record;
}

/**
 * `record.enrichment`, parsed and its queries rebuilt (`restoredEnrichment`) on first read: most
 * records read are never asked for it (every record write returns its record), and rebuilding a
 * latency alert's 19 queries costs ~0.1 ms.
 */
function lazyEnrichment(record: AlertRecord, json: string): void {
  let value: Enrichment | undefined;
  Object.defineProperty(record, 'enrichment', {
    enumerable: true,
    configurable: true,
    get() {
      if (value === undefined) value = restoredEnrichment(fromJson<StoredEnrichment>(json), record.alert);
      return value;
    },
    set(v: Enrichment) {
      value = v;
    },
  });
}

/** A history item's event. */
export function eventFromItem(item: { eventJson: string }): HistoryEvent {
  return fromJson<HistoryEvent>(item.eventJson);
}
