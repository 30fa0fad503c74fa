/**
 * Builds the signed "Acknowledge" links: `PUBLIC_URL/v1/ack/<token>`, one per channel message, so the
 * acknowledgement records which channel's link was used.
 */
import { keyPart } from '../store/keys.js';
import { signAckToken, type AckKeys } from './token.js';

/** Route prefix of the acknowledgement page (see `shared/ack/routes.ts`). */
export const ACK_PATH = '/v1/ack';

export interface AckLinkSettings {
  /** `PUBLIC_URL`, without trailing slash; may have a path (a reverse proxy's prefix). */
  publicUrl: string;
  keys: AckKeys;
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

/** Signs links; absent when `PUBLIC_URL` or `ACK_SECRET` is unset (messages then carry no link). */
export class AckLinks {
  constructor(readonly settings: AckLinkSettings) {}

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
}
