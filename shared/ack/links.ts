/**
 * Builds the signed "Acknowledge" links: `PUBLIC_URL/v1/ack/<token>`, one per channel message, so the
 * acknowledgement records which channel's link was used.
 */
import { randomBytes } from 'node:crypto';
import { keyPart } from '../store/keys.js';
import { MAX_SET_ALERTS, type AlertSetStore } from '../store/alert-set.js';
import type { AlertRecord } from '../store/alert-record.js';
import type { Logger } from '../core/logger.js';
import type { SigningKeys } from '../core/signed-token.js';
import { MAX_TOKEN_ALERTS, signAckToken } from './token.js';

/** Route prefix of the acknowledgement page (see `shared/ack/routes.ts`). */
export const ACK_PATH = '/v1/ack';

/** The Slack app's interactivity route (public contract; `shared/ack/slack-interactions.ts`), here so the app can mount it without loading it. */
export const SLACK_INTERACTIONS_PATH = '/v1/slack/interactions';

export interface AckLinkSettings {
  /** `PUBLIC_URL`, without trailing slash; may have a path (a reverse proxy's prefix). */
  publicUrl: string;
  keys: SigningKeys;
  /** Link lifetime, seconds (`ACK_TOKEN_TTL_SECONDS`). */
  ttlSeconds: number;
}

/**
 * Slack between Prometheus's clock (`startsAt`) and ours (the link's issue time), milliseconds: a link
 * covers occurrences that started up to this long after it was made, so a fast alert is not refused.
 */
export const CLOCK_SKEW_MS = 60_000;

/** The latest `startsAt` (epoch ms) a link issued at `issuedAt` (epoch seconds) still acknowledges. */
export function latestCoveredStart(issuedAt: number): number {
  return issuedAt * 1000 + CLOCK_SKEW_MS;
}

/**
 * Whether a link issued at `issuedAt` (epoch seconds) still acknowledges the record's current firing:
 * it had started by then (plus {@link CLOCK_SKEW_MS}) and has not fired again since (`refiredAt`), the
 * same rule the store's `acknowledge` applies; the page offers its form only when one alert passes.
 */
export function coversFiring(record: AlertRecord, issuedAt: number): boolean {
  const latest = new Date(latestCoveredStart(issuedAt)).toISOString();
  return record.status === 'firing' && !record.acknowledgement && record.startsAt <= latest && (record.refiredAt ?? '') <= latest;
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
    return `${new URL(this.settings.publicUrl).pathname.replace(/\/+$/, '')}${ACK_PATH}`;
  }

  /**
   * @param fingerprints the firing alerts the link acknowledges (at most `MAX_TOKEN_ALERTS` are kept); an
   *   over-long one is carried as its key digest (`keyPart`), which the store resolves to the same record,
   *   so one alert cannot make the whole group's link too long to accept
   * @param nowMs epoch milliseconds: the link's issue time
   * @returns the absolute URL
   */
  url(fingerprints: string[], group: string, channel: string, nowMs: number): string {
    const issuedAt = Math.ceil(nowMs / 1000);
    const token = signAckToken({ fingerprints: fingerprints.map(keyPart), group, channel, issuedAt, expiresAt: issuedAt + this.settings.ttlSeconds }, this.settings.keys);
    return `${this.settings.publicUrl}${ACK_PATH}/${token}`;
  }

  /**
   * Like {@link url}, for any number of alerts: above {@link MAX_TOKEN_ALERTS} (a storm digest) the
   * fingerprints are stored as an alert set first (one write) and the token names the set. When the
   * write fails the link still goes out, covering the first alerts, and the failure is logged.
   * @param stored the group's sets so far (see {@link StoredSets}): each channel's digest of the same
   *   alerts names the same set, so a group costs one write, not one per channel
   */
  async urlForAll(fingerprints: string[], group: string, channel: string, nowMs: number, stored: StoredSets = new Map()): Promise<string> {
    if (fingerprints.length <= MAX_TOKEN_ALERTS || !this.sets) return this.url(fingerprints, group, channel, nowMs);
    const key = `${group}\u0000${fingerprints.join('\u0000')}`;
    const pending = stored.get(key) ?? this.#storeSet(this.sets, fingerprints, group, channel, nowMs);
    stored.set(key, pending);
    const set = await pending;
    if (!set) return this.url(fingerprints, group, channel, nowMs);
    const { id, issuedAt } = set;
    const expiresAt = issuedAt + this.settings.ttlSeconds;
    const claims = { fingerprints: fingerprints.slice(0, MAX_TOKEN_ALERTS).map(keyPart), group, channel, issuedAt, expiresAt, set: { id, alerts: Math.min(fingerprints.length, MAX_SET_ALERTS) } };
    return `${this.settings.publicUrl}${ACK_PATH}/${signAckToken(claims, this.settings.keys)}`;
  }

  /** Stores the set; `undefined` when the write failed (logged: the links then cover the first alerts only). */
  async #storeSet(sets: AlertSetStore, fingerprints: string[], group: string, channel: string, nowMs: number): Promise<StoredSet | undefined> {
    const id = randomBytes(16).toString('hex');
    const issuedAt = Math.ceil(nowMs / 1000);
    try {
      await sets.put(id, { fingerprints, groupKey: group }, (issuedAt + this.settings.ttlSeconds) * 1000);
      return { id, issuedAt };
    } catch (err) {
      this.logger?.error('alert set write failed: the link covers only the first alerts', { group, channel, alerts: fingerprints.length, covered: MAX_TOKEN_ALERTS, error: (err as Error).message });
      return undefined;
    }
  }
}
