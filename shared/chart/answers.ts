/**
 * The chart route's answers by what a link means: those drawn lately (a minute each), those being drawn
 * (shared by every request for the same chart that arrives meanwhile), and the bound on how many distinct
 * charts are drawn at once.
 */

/** A drawn answer: 200 with the chart, or 503 with a PNG naming the cause. */
export interface Drawn {
  status: 200 | 503;
  png: Uint8Array;
  headers: Record<string, string>;
  /** How long the answer holds, seconds: the chart's `max-age`, or a failure's `Retry-After`. */
  keepSeconds: number;
}

/**
 * Most charts kept. Each page view and each message signs the same chart anew (another expiry, another
 * token), so answers are kept by the chart, not the token's text: a link re-opened, unfurled, fetched
 * by a mail scanner or minted again within its minute costs no query. A chart link lets anyone who holds
 * it ask Prometheus for the alert's series for days, so this bounds the rate per chart, as the
 * concurrent-draw cap bounds the concurrency.
 */
const CACHED_CHARTS = 64;
/** Most bytes of PNG kept (a chart is tens of KB): beyond it, the oldest are dropped. */
const CACHED_CHART_BYTES = 8 * 1024 * 1024;

/** Answered when `limit` other charts are being drawn: nothing was started. */
export const BUSY = Symbol('busy');

/**
 * Answers by chart key: kept, being drawn, or drawn now if fewer than `limit` are being drawn.
 *
 * Slack, Feishu and a browser fetch a new message's chart at the same moment: the requests for a chart
 * being drawn await that one drawing (its answer or its error) and do not count against `limit`, which
 * bounds distinct drawings only (each holds a range query's answer and a render). So at most `limit`
 * drawings are held here at once.
 */
export class ChartAnswers {
  readonly #kept = new KeptAnswers(CACHED_CHARTS);
  readonly #drawing = new Map<string, Promise<Drawn>>();

  /**
   * @param limit most distinct charts drawn at once
   * @param now epoch milliseconds
   */
  constructor(
    readonly limit: number,
    readonly now: () => number,
  ) {}

  /**
   * The answer for `key`: the one kept, the drawing under way, or `draw()` started now; {@link BUSY}
   * when `limit` other charts are being drawn. A drawing's answer is kept for its `keepSeconds`; a
   * drawing that throws is not kept (its error reaches every request that awaited it).
   */
  answer(key: string, draw: () => Promise<Drawn>): Promise<Drawn> | typeof BUSY {
    const kept = this.#kept.get(key, this.now());
    if (kept) return Promise.resolve(kept);
    const underWay = this.#drawing.get(key);
    if (underWay) return underWay;
    if (this.#drawing.size >= this.limit) return BUSY;
    const drawing = draw()
      .then((drawn) => {
        this.#kept.set(key, drawn, this.now() + drawn.keepSeconds * 1000);
        return drawn;
      })
      .finally(() => {
        if (this.#drawing.get(key) === drawing) this.#drawing.delete(key);
      });
    this.#drawing.set(key, drawing);
    return drawing;
  }
}

/** At most `max` answers and {@link CACHED_CHART_BYTES}, the oldest dropped first. */
class KeptAnswers {
  readonly #entries = new Map<string, Drawn & { untilMs: number }>();
  #bytes = 0;
  constructor(readonly max: number) {}

  get(key: string, nowMs: number): Drawn | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.untilMs > nowMs) return entry;
    if (entry) this.#delete(key);
    return undefined;
  }

  set(key: string, drawn: Drawn, untilMs: number): void {
    this.#delete(key);
    this.#entries.set(key, { ...drawn, untilMs });
    this.#bytes += drawn.png.byteLength;
    while (this.#entries.size > this.max || this.#bytes > CACHED_CHART_BYTES)
      this.#delete(this.#entries.keys().next().value!);
  }

  #delete(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#bytes -= entry.png.byteLength;
    this.#entries.delete(key);
  }
}
