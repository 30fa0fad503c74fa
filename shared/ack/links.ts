/**
 * Builds the signed "Acknowledge" links: `PUBLIC_URL/v1/ack/<token>`, one per channel message, so the
 * acknowledgement records which channel's link was used.
 */
import { randomBytes } from 'node:crypto';
import { SENDER_CLOCK_SKEW_MS } from '../alertmanager/schema.js';
import { keyPart } from '../store/keys.js';
import { MAX_SET_ALERTS, type AlertSetStore } from '../store/alert-set.js';
import type { AlertRecord, LinkCover } from '../store/alert-record.js';
import { isoTime } from '../store/alert-record-items.js';
import type { Logger } from '../core/logger.js';
import type { SigningKeys } from '../core/signed-token.js';
import { MAX_TOKEN_ALERTS, signAckToken, type AckClaims } from './token.js';
import { trimTrailing } from '../core/trim.js';
import type { Locale } from '../core/locale.js';

/** Route prefix of the acknowledgement page (see `shared/ack/routes.ts`). */
export const ACK_PATH = '/v1/ack';

/** The Slack app's interactivity route (public contract; `shared/ack/slack-interactions.ts`), here so the app can mount it without loading it. */
export const SLACK_INTERACTIONS_PATH = '/v1/slack/interactions';

/** The Feishu app's callback route (public contract; `shared/ack/feishu-callback.ts`), here for the same reason. */
export const FEISHU_CALLBACK_PATH = '/v1/feishu/callback';

export interface AckLinkSettings {
  /** `PUBLIC_URL`, without trailing slash; may have a path (a reverse proxy's prefix). */
  publicUrl: string;
  keys: SigningKeys;
  /** Link lifetime, seconds (`ACK_TOKEN_TTL_SECONDS`). */
  ttlSeconds: number;
}

/**
 * How long after it was issued a link made before links carried their alerts' `startsAt` covers
 * occurrences that started, milliseconds: the realistic skew between the sender's clock and ours.
 */
export const CLOCK_SKEW_MS = SENDER_CLOCK_SKEW_MS;

/**
 * How long after a link is made the re-fire it was made for may be recorded, milliseconds (our clock both):
 * the link is signed before fan-out, the re-fire's `refiredAt` written after it, within the delivery budget.
 */
export const REFIRE_RECORD_LAG_MS = 60_000;

/** The channel a link is made for: its name (recorded with the acknowledgement) and its language (the page's). */
export interface LinkChannel {
  name: string;
  locale?: Locale;
}

/** A channel named alone writes English. */
const linkChannel = (to: string | LinkChannel): LinkChannel => (typeof to === 'string' ? { name: to } : to);

/** An alert a link is made for: its fingerprint and the `startsAt` of its current occurrence. */
export interface LinkedAlert {
  fingerprint: string;
  startsAt: string;
}

/**
 * How far ahead of its issue time a link's `startsAt` may reach, milliseconds: a sender's clock hours ahead
 * of ours still has its firing acknowledged, while an alert dated years ahead (anyone who can post to
 * Alertmanager's API can send one into a group) cannot make an old link cover the occurrences of days to come.
 */
export const MAX_SENDER_AHEAD_MS = 24 * 3_600_000;

/**
 * What a link covers (see {@link LinkCover}): occurrences that started by the latest `startsAt` of its alerts
 * (the sender's clock against the sender's clock), at most {@link MAX_SENDER_AHEAD_MS} after its issue time
 * (a link without `startsAt`: by its issue time plus {@link CLOCK_SKEW_MS}), first notified and re-fired by
 * its issue time plus {@link REFIRE_RECORD_LAG_MS} (ours against ours). The latest `startsAt` is one value for
 * the whole link: an alert dated hours ahead in the group would stretch it over later occurrences of the
 * others, which the notification time (recorded as the link's message went out) rules out.
 */
export function linkCover(claims: Pick<AckClaims, 'issuedAt' | 'startsAt'>): LinkCover {
  const issuedMs = claims.issuedAt * 1000;
  return {
    startsAtMs: Math.min(claims.startsAt ?? issuedMs + CLOCK_SKEW_MS, issuedMs + MAX_SENDER_AHEAD_MS),
    refiredAtMs: claims.issuedAt * 1000 + REFIRE_RECORD_LAG_MS,
  };
}

/**
 * Whether a link still acknowledges the record's current firing: {@link linkCover} covers its `startsAt` and
 * its re-fire, the same rule the store's `acknowledge` applies; the page offers its form only when one alert passes.
 */
export function coversFiring(record: AlertRecord, claims: Pick<AckClaims, 'issuedAt' | 'startsAt'>): boolean {
  const cover = linkCover(claims);
  return (
    record.status === 'firing' &&
    !record.acknowledgement &&
    record.startsAt <= isoTime(cover.startsAtMs) &&
    record.notifiedAt <= isoTime(cover.refiredAtMs) &&
    (record.refiredAt ?? '') <= isoTime(cover.refiredAtMs)
  );
}

/** The latest parseable `startsAt` of `alerts`, epoch milliseconds; `undefined` when none parses. */
function latestStart(alerts: readonly LinkedAlert[]): number | undefined {
  const starts = alerts.map((a) => Date.parse(a.startsAt)).filter(Number.isFinite);
  return starts.length ? Math.max(...starts) : undefined;
}

/**
 * Longest acknowledgement token a link carries, characters. Within Slack's button `value` (2,000) and URL
 * (3,000) limits, Feishu's callback value (`FEISHU_MAX_CALLBACK_VALUE_CHARS`), and far under Node's 16 KiB
 * request-header limit, past which opening the page answers 431. Reached by what the token names
 * ({@link MAX_NAMED_CHARS}), never by cutting it.
 */
export const MAX_LINK_TOKEN_CHARS = 2000;
/**
 * Characters of fingerprints (as JSON strings, with their commas) a token names: 50 Alertmanager
 * fingerprints (16 hex digits) take 950. Longer ones (a sender's own, up to 256 bytes each) are named as
 * far as they fit; a storm link stores them all in its set, a link without a set store covers those named.
 */
const MAX_NAMED_CHARS = 1000;

/** The first of `keys` (at most {@link MAX_TOKEN_ALERTS}) that fit {@link MAX_NAMED_CHARS}; at least one. */
function namedInToken(keys: readonly string[]): string[] {
  const named: string[] = [];
  let chars = 0;
  for (const key of keys.slice(0, MAX_TOKEN_ALERTS)) {
    chars += JSON.stringify(key).length + 1;
    if (chars > MAX_NAMED_CHARS && named.length) break;
    named.push(key);
  }
  return named;
}

/** An alert set as stored for a link: its id and issue time (epoch seconds; its expiry follows from the link's lifetime). */
interface StoredSet {
  id: string;
  issuedAt: number;
}

/**
 * One group's stored alert sets, by group and fingerprints: the channels of a storm each send a digest
 * of the same alerts, and their links name one set (each link still names its own channel).
 */
export type StoredSets = Map<string, Promise<StoredSet | undefined>>;

/** Signs links; absent when `PUBLIC_URL` or `ACK_SECRET` is unset (messages then carry no link). */
export class AckLinks {
  /**
   * @param sets where a storm digest's alert set is stored ({@link urlForAll}); unset: such a link
   *   covers its first {@link MAX_TOKEN_ALERTS} alerts only
   */
  constructor(
    readonly settings: AckLinkSettings,
    readonly sets?: AlertSetStore,
    private readonly logger?: Logger,
  ) {}

  /** The service's own origin (`https://host[:port]`), for the POST's `Origin` check. */
  get origin(): string {
    return new URL(this.settings.publicUrl).origin;
  }

  /**
   * The acknowledgement pages' path as the browser sees it: `PUBLIC_URL`'s path plus {@link ACK_PATH}
   * (`/alerts/v1/ack` behind a proxy that serves the service under `/alerts` and strips it). Cookies
   * are scoped to it; scoped to the service's own `/v1/ack`, the browser would never send them back.
   */
  get pagePath(): string {
    return `${trimTrailing(new URL(this.settings.publicUrl).pathname, '/')}${ACK_PATH}`;
  }

  /**
   * @param alerts the firing alerts the link acknowledges (at most `MAX_TOKEN_ALERTS` are kept, and only as
   *   many as fit {@link MAX_LINK_TOKEN_CHARS}: {@link urlForAll} stores the rest), with the
   *   `startsAt` of their current occurrence (the link covers occurrences that started by the latest); an
   *   over-long fingerprint is carried as its key digest (`keyPart`), which the store resolves to the same
   *   record, so one alert cannot make the whole group's link too long to accept
   * @param nowMs epoch milliseconds: the link's issue time
   * @returns the absolute URL
   */
  url(alerts: readonly LinkedAlert[], group: string, to: string | LinkChannel, nowMs: number): string {
    const channel = linkChannel(to);
    const issuedAt = Math.ceil(nowMs / 1000);
    const startsAt = latestStart(alerts);
    const token = signAckToken(
      {
        fingerprints: namedInToken(alerts.map((a) => keyPart(a.fingerprint))),
        group,
        channel: channel.name,
        issuedAt,
        expiresAt: issuedAt + this.settings.ttlSeconds,
        ...(startsAt !== undefined && { startsAt }),
        ...(channel.locale && { locale: channel.locale }),
      },
      this.settings.keys,
    );
    return `${this.settings.publicUrl}${ACK_PATH}/${token}`;
  }

  /**
   * Like {@link url}, for any number of alerts: above {@link MAX_TOKEN_ALERTS} (a storm digest), or when
   * their fingerprints are too long for the token to name them all ({@link MAX_LINK_TOKEN_CHARS}), the
   * fingerprints are stored as an alert set first (one write) and the token names the set. When the
   * write fails the link still goes out, covering the first alerts, and the failure is logged.
   * @param issue.nowMs epoch milliseconds: the link's issue time
   * @param issue.stored the group's sets so far (see {@link StoredSets}): each channel's digest of the same
   *   alerts names the same set, so a group costs one write, not one per channel
   */
  async urlForAll(
    alerts: readonly LinkedAlert[],
    group: string,
    to: string | LinkChannel,
    { nowMs, stored = new Map() }: { nowMs: number; stored?: StoredSets },
  ): Promise<string> {
    const channel = linkChannel(to);
    const fingerprints = alerts.map((a) => a.fingerprint);
    const named = namedInToken(fingerprints.map(keyPart));
    if (named.length === alerts.length || !this.sets) return this.url(alerts, group, channel, nowMs);
    const key = `${group}\u0000${fingerprints.join('\u0000')}`;
    const pending = stored.get(key) ?? this.#storeSet(this.sets, fingerprints, { group, channel: channel.name, nowMs });
    stored.set(key, pending);
    const set = await pending;
    if (!set) return this.url(alerts, group, channel, nowMs);
    const { id, issuedAt } = set;
    const expiresAt = issuedAt + this.settings.ttlSeconds;
    const startsAt = latestStart(alerts);
    const claims: AckClaims = {
      fingerprints: named,
      group,
      channel: channel.name,
      issuedAt,
      expiresAt,
      ...(startsAt !== undefined && { startsAt }),
      set: { id, alerts: Math.min(fingerprints.length, MAX_SET_ALERTS) },
      ...(channel.locale && { locale: channel.locale }),
    };
    return `${this.settings.publicUrl}${ACK_PATH}/${signAckToken(claims, this.settings.keys)}`;
  }

  /** Stores the set; `undefined` when the write failed (logged: the links then cover the first alerts only). */
  async #storeSet(
    sets: AlertSetStore,
    fingerprints: string[],
    { group, channel, nowMs }: { group: string; channel: string; nowMs: number },
  ): Promise<StoredSet | undefined> {
    const id = randomBytes(16).toString('hex');
    const issuedAt = Math.ceil(nowMs / 1000);
    try {
      await sets.put(id, { fingerprints, groupKey: group }, (issuedAt + this.settings.ttlSeconds) * 1000);
      return { id, issuedAt };
    } catch (err) {
      this.logger?.error('alert set write failed: the link covers only the first alerts', {
        group,
        channel,
        alerts: fingerprints.length,
        covered: MAX_TOKEN_ALERTS,
        error: (err as Error).message,
      });
      return undefined;
    }
  }
}
