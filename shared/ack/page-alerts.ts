/**
 * The alerts an acknowledgement page shows: their records, their values now (read again, cached for
 * {@link REFRESH_CACHE_MS}: mail scanners and chat unfurlers fetch links on their own) and their chart links.
 */
import type { Alert } from '../alertmanager/schema.js';
import { chartUrl, type ChartLinkSettings } from '../chart/url.js';
import type { Locale } from '../core/locale.js';
import type { Logger } from '../core/logger.js';
import type { Enrichment } from '../enrich/types.js';
import type { AlertRecord, AlertStores } from '../store/alert-record.js';
import { keyPart } from '../store/keys.js';
import type { PageAlert } from './page.js';

/** How long the values now read for a page are reused, milliseconds (each read is ~12 Prometheus queries). */
export const REFRESH_CACHE_MS = 60_000;
/** Pages whose values now are kept. */
const REFRESH_CACHE_ENTRIES = 64;

export interface PageAlertDeps {
  stores: Pick<AlertStores, 'records'>;
  /**
   * Re-runs enrichment for the alerts shown (their values now), time-boxed; must never throw (like
   * `enrichAlerts`: Prometheus down gives `unavailable`). Unset: the page shows what the records kept.
   */
  refresh?: (alerts: Alert[]) => Promise<Map<string, Enrichment>>;
  /** Signs the alerts' chart URLs (`chartUrl` of `shared/chart/url.ts`); unset: no chart. */
  charts?: ChartLinkSettings;
  logger: Logger;
  /** Epoch milliseconds. */
  now: () => number;
}

/** Reads the alerts of a page; one per process of the page's routes (its cache is the values now). */
export class PageAlerts {
  readonly #fresh = new Map<string, { untilMs: number; values: Promise<Map<string, Enrichment>> }>();

  constructor(private readonly deps: PageAlertDeps) {}

  /**
   * The records of the alerts shown, their values now and chart links (in the page's language). "Now" is
   * read for every alert shown (a page of a long list): one enrichment, whose queries are per kind, not per alert.
   * @param now epoch milliseconds
   * @returns one entry per fingerprint, in order; `{fingerprint}` alone for an alert without a record
   */
  async read(fingerprints: string[], now: number, locale: Locale): Promise<PageAlert[]> {
    const found = await this.deps.stores.records.getMany(fingerprints, now);
    // By key part: a link carries an over-long fingerprint as its digest, the record keeps it whole.
    const records = new Map([...found.values()].map((r) => [keyPart(r.fingerprint), r]));
    const fresh = await this.#refresh([...records.values()]);
    return fingerprints.map((fingerprint) => {
      const record = records.get(keyPart(fingerprint));
      if (!record) return { fingerprint };
      const charts = this.deps.charts && { ...this.deps.charts, locale };
      const chart = chartUrl({ ...record.alert, enrichment: record.enrichment }, charts, now);
      return { fingerprint, record, fresh: fresh?.get(record.fingerprint), ...(chart && { chartUrl: chart }) };
    });
  }

  /**
   * Values now; a failure only leaves them out (the page must open while Prometheus is down). Read at
   * most once per {@link REFRESH_CACHE_MS} for the same alerts, however many GETs: concurrent ones share the one read.
   */
  async #refresh(records: AlertRecord[]): Promise<Map<string, Enrichment> | undefined> {
    const refresh = this.deps.refresh;
    if (!refresh || records.length === 0) return undefined;
    const key = records
      .map((r) => r.fingerprint)
      .sort()
      .join('\n');
    const now = this.deps.now();
    const cached = this.#fresh.get(key);
    if (cached && cached.untilMs > now) return cached.values;
    const values = this.#readNow(refresh, records);
    this.#fresh.delete(key);
    this.#fresh.set(key, { untilMs: now + REFRESH_CACHE_MS, values });
    if (this.#fresh.size > REFRESH_CACHE_ENTRIES) this.#fresh.delete(this.#fresh.keys().next().value!);
    return values;
  }

  async #readNow(
    refresh: NonNullable<PageAlertDeps['refresh']>,
    records: AlertRecord[],
  ): Promise<Map<string, Enrichment>> {
    try {
      return await refresh(records.map((r) => r.alert));
    } catch (err) {
      this.deps.logger.warn('ack page refresh failed', { error: (err as Error).message });
      return new Map(
        records.map((r) => [
          r.fingerprint,
          {
            status: 'unavailable',
            kind: r.enrichment?.kind ?? 'unknown',
            reason: 'the values now could not be read',
            reasonZh: '读取不到当前值',
          },
        ]),
      );
    }
  }
}
