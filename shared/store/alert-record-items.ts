/**
 * Item layout of the alert state in the one table (partition key `pk`, TTL attribute `expiresAt`; keys:
 * `keys.ts`), as the four alert stores (`alert-record.ts`) read and write it:
 * - `alert#<fingerprint>`: the record; `alertJson` and `enrichmentJson` hold the alert and its
 *   enrichment as JSON (DynamoDB numbers cannot be `NaN` or ±Infinity, which signals may be), `ack` and
 *   `escalation` are maps, `channels` a string set, `historySeq` the number of history items;
 *   `deliveredEvent` the key of the alert event (`generationKey`) whose claimed channels all accepted it,
 *   written by the same request as the rest of the record (`delivery-mark.ts`: the dedupe ledger reads it);
 *   `runCount` and `runSince`, the flap run of its firing (`seen.ts`); `notifiedEventJson` and
 *   `notifiedEventSeq`, the `notified` history event of the write that started the occurrence;
 * - `history#<fingerprint>#<seq, 10 digits>`: one history event (`eventJson`).
 * An over-long fingerprint appears in keys as its digest (`keys.ts`); the record's `fingerprint`
 * attribute keeps it whole. Items are parsed on read (`stored-item.ts`): the schemas below accept every
 * record, history item and escalation an earlier version wrote.
 */
import { alertStatusSchema, type Alert } from '../alertmanager/schema.js';
import * as z from '../core/zod.js';
import type { Enrichment } from '../enrich/types.js';
import { restoredEnrichment, storedEnrichment, type StoredEnrichment } from '../enrich/stored.js';
import { cutAlert, cutText } from '../render/reduce.js';
import { utf8Bytes } from '../core/truncate.js';
import type { AlertRecord, HistoryEvent } from './alert-record.js';
import { parseItem, StoredItemError, stringSet } from './stored-item.js';

const acknowledgementSchema = z.object({
  by: z.string(),
  at: z.string(),
  channel: z.string(),
  silenceId: z.optional(z.string()),
  silenceEndsAt: z.optional(z.string()),
});

const escalationSchema = z.object({
  state: z.enum(['scheduled', 'sent', 'cancelled']),
  dueAt: z.string(),
  at: z.optional(z.string()),
  reason: z.optional(z.enum(['acknowledged', 'resolved', 'silenced', 'inhibited'])),
});

/** The stored shape of a record (what `GetItem` returns through the document client). */
export const recordItemSchema = z.object({
  pk: z.string(),
  fingerprint: z.string(),
  /** The occurrence, RFC 3339 with milliseconds. */
  startsAt: z.string(),
  status: alertStatusSchema,
  alertJson: z.string(),
  enrichmentJson: z.optional(z.string()),
  groupKey: z.string(),
  externalURL: z.string(),
  channels: z.optional(stringSet()),
  notifiedAt: z.string(),
  resolvedAt: z.optional(z.string()),
  ack: z.optional(acknowledgementSchema),
  escalation: z.optional(escalationSchema),
  historySeq: z.optional(z.number()),
  /** The occurrence's generation (`occurrence.ts`), once it fired again; absent: 0. */
  generation: z.optional(z.number()),
  /** When the current generation fired again (RFC 3339, our clock); absent for generation 0. */
  refiredAt: z.optional(z.string()),
  /** Key of the event every claimed channel accepted (`delivery-mark.ts`); absent in records written before it existed. */
  deliveredEvent: z.optional(z.string()),
  /** The flap run of the occurrence's firing (`seen.ts`, `runOf`): firings in it, and its first `startsAt` (epoch ms). */
  runCount: z.optional(z.number()),
  runSince: z.optional(z.number()),
  /**
   * The `notified` history event of the write that started this occurrence, kept in the record instead of
   * a history item of its own, as event number `notifiedEventSeq` (the history reader takes it from here).
   * The next new occurrence's write moves it to its history item (`history#<fingerprint>#<notifiedEventSeq>`).
   */
  notifiedEventJson: z.optional(z.string()),
  notifiedEventSeq: z.optional(z.number()),
  /** Epoch seconds. */
  expiresAt: z.number(),
});
export type RecordItem = z.infer<typeof recordItemSchema>;

/** What a new occurrence's write replaced (`UPDATED_OLD`: the old values of the attributes it wrote). */
export const replacedSchema = z.object({
  historySeq: z.optional(z.number()),
  notifiedEventJson: z.optional(z.string()),
  notifiedEventSeq: z.optional(z.number()),
  expiresAt: z.optional(z.number()),
});
export type Replaced = z.infer<typeof replacedSchema>;

/** A history item. */
export const historyRowSchema = z.object({ pk: z.string(), eventJson: z.string(), expiresAt: z.number() });

/** What the scan for scheduled escalations reads of a record. */
export const scheduledSchema = z.object({
  fingerprint: z.string(),
  startsAt: z.string(),
  escalation: z.object({ dueAt: z.string() }),
});

/** What the stored alert must be: the webhook's alert as parsed (labels kept as sent, `__proto__` too). */
const storedAlertSchema = z.object({
  status: alertStatusSchema,
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()),
  startsAt: z.string(),
  endsAt: z.string(),
  generatorURL: z.string(),
  fingerprint: z.string(),
});

/** The history events a reader understands: every event has these (the rest depends on its `type`). */
const storedEventSchema = z.looseObject({ type: z.string(), at: z.string(), startsAt: z.string() });

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
export function recordJsons(
  alert: Alert,
  enrichment: Enrichment | undefined,
): { alertJson: string; enrichmentJson?: string } {
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
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'number' && !Number.isFinite(v) ? { [NON_FINITE]: String(v) } : v,
  );
}

/** Reverses {@link toJson}. @throws SyntaxError on malformed JSON */
export function fromJson(text: string): unknown {
  return JSON.parse(text, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const keys = Object.keys(v);
      const n = (v as Record<string, unknown>)[NON_FINITE];
      if (keys.length === 1 && typeof n === 'string') return Number(n);
    }
    return v;
  });
}

/**
 * A JSON attribute of the item `key`, checked against `schema` and returned as parsed (so that label
 * names zod would not copy, `__proto__`, stay).
 * @throws StoredItemError
 */
function jsonOf<T>(key: string, text: string, schema: z.ZodMiniType, what: string): T {
  let value: unknown;
  try {
    value = fromJson(text);
  } catch {
    throw new StoredItemError(key, `${what}: not JSON`);
  }
  parseItem(schema, value);
  return value as T;
}

export const isoTime = (ms: number) => new Date(ms).toISOString();

/**
 * The record an item holds.
 * @throws StoredItemError when the item or its stored alert does not match the layout
 */
export function fromItem(raw: unknown): AlertRecord {
  const item = parseItem(recordItemSchema, raw);
  const record: AlertRecord = {
    fingerprint: item.fingerprint,
    startsAt: item.startsAt,
    status: item.status,
    alert: jsonOf<Alert>(item.pk, item.alertJson, storedAlertSchema, 'alertJson'),
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
 * latency alert's 19 queries costs ~0.1 ms. The JSON is our own serialisation of an `Enrichment`
 * (`toJson`), read back as that type.
 */
function lazyEnrichment(record: AlertRecord, json: string): void {
  let value: Enrichment | undefined;
  Object.defineProperty(record, 'enrichment', {
    enumerable: true,
    configurable: true,
    get() {
      if (value === undefined) value = restoredEnrichment(fromJson(json) as StoredEnrichment, record.alert);
      return value;
    },
    set(v: Enrichment) {
      value = v;
    },
  });
}

/** A history item's event. @throws StoredItemError */
export function eventFromJson(key: string, eventJson: string): HistoryEvent {
  return jsonOf<HistoryEvent>(key, eventJson, storedEventSchema, 'eventJson');
}
