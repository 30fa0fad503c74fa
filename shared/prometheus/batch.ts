/**
 * Several PromQL expressions evaluated at one time (or over one range) sent as ONE request: each
 * expression's series are tagged with its index (`label_replace`), the tagged vectors joined with
 * `or` (the tags keep every series apart, so `or` drops none), and the answer split by the tag.
 *
 * Written here, not taken from a library: no Prometheus client for Node batches queries. Why at all:
 * an enrichment group asks dozens of small queries at the same instant (a latency alert 41), and
 * on a quiet Prometheus each one costs more in HTTP, JSON and Prometheus's own per-query set-up
 * than in evaluation (bench/floor.ts measured 0.5 ms of our CPU per query; a 10-alert group sent 86).
 *
 * One failing expression must not fail the others, so a batch that fails in a way one member can
 * cause (a 400/422 error, a time-out, an answer too large or not in the shape asked for) is sent
 * again one expression per request, each then failing or answering exactly as it would have alone.
 * Failures no member causes (no connection, a redirect, Prometheus unavailable, the caller's abort)
 * fail every member at once, as they would have failed each.
 * @see https://prometheus.io/docs/prometheus/latest/querying/functions/#label_replace
 * @see https://prometheus.io/docs/prometheus/latest/querying/operators/#logicalset-binary-operators
 */
import { PrometheusError, type PrometheusClient, type QueryResult } from './client.js';
import type { Sample, Series } from './wire.js';

/** The label that tags each member's series; reserved (`__`) so no scraped series carries it. */
export const BATCH_LABEL = '__batch_query__';

/**
 * Most expressions in one request: Prometheus evaluates one query on one goroutine, so a few
 * requests of many small queries keep some of its parallelism for a group of heavy ones.
 */
export const MAX_BATCH_MEMBERS = 32;

/**
 * Most characters of member expressions in one request (a form-encoded POST): a storm's
 * expressions (100 KB of matchers each) are sent alone, as before, and a batch stays far below
 * any body limit in front of Prometheus (Go's form parser stops at 10 MB).
 */
export const MAX_BATCH_CHARS = 32_000;

/** The PromQL of one batch: member `i`'s series tagged `BATCH_LABEL="i"`, all joined with `or`. */
export function combineQueries(exprs: readonly string[]): string {
  return exprs.map((expr, i) => `label_replace(${expr}, "${BATCH_LABEL}", "${i}", "", "")`).join(' or ');
}

/**
 * A batch's answer split back into its `members` answers, each series without the tag.
 * @returns `undefined` when a series carries no valid tag (the answer is not the batch's)
 */
export function splitAnswer<T extends { metric: Record<string, string> }>(
  items: readonly T[],
  members: number,
): T[][] | undefined {
  const parts: T[][] = Array.from({ length: members }, () => []);
  for (const item of items) {
    const { [BATCH_LABEL]: tag, ...metric } = item.metric;
    const index = Number(tag);
    if (tag === undefined || !Number.isInteger(index) || index < 0 || index >= members || String(index) !== tag)
      return undefined;
    parts[index]!.push({ ...item, metric });
  }
  return parts;
}

/** Whether one member of a batch can have caused this failure (then each is sent alone). */
function memberMayHaveCaused(err: unknown): boolean {
  if (!(err instanceof PrometheusError)) return false;
  return (
    err.errorType === 'timeout' ||
    err.errorType === 'too_large' ||
    err.httpStatus === 400 ||
    err.httpStatus === 422 ||
    err.httpStatus === 200
  );
}

type Item = { metric: Record<string, string> };

interface Member<T> {
  expr: string;
  resolve(items: T[]): void;
  reject(err: unknown): void;
}

interface Queue<T extends Item> {
  members: Member<T>[];
  send(expr: string): Promise<QueryResult<T[]>>;
}

export interface BatcherOptions {
  /** Aborts every request (the caller's overall budget). */
  signal?: AbortSignal;
  /** Called once per request whose answer carried warnings, with what was sent. */
  onWarnings?(query: string, warnings: string[]): void;
}

/**
 * Collects the queries asked while the current event-loop turn runs (the whole synchronous fan-out
 * of an enrichment), then sends them in as few requests as {@link MAX_BATCH_MEMBERS} and
 * {@link MAX_BATCH_CHARS} allow, one request per time or range. Each call resolves with its own
 * expression's series, as the client's query would; nothing is cached (the caller dedupes).
 */
export class QueryBatcher {
  readonly #client: PrometheusClient;
  readonly #options: BatcherOptions;
  // Sample queues (instant) and Series queues (range), told apart by their key.
  readonly #queues = new Map<string, Queue<Item>>();
  #scheduled = false;
  #requests = 0;

  constructor(client: PrometheusClient, options: BatcherOptions = {}) {
    this.#client = client;
    this.#options = options;
  }

  /** HTTP requests sent so far (a retry of the same request not counted). */
  get requests(): number {
    return this.#requests;
  }

  /**
   * `expr` at `time`, batched with the other instant queries at that time.
   * @param alone send it in a request of its own (an expression that may not be an instant vector)
   * @throws what {@link PrometheusClient.instantQuery} throws for `expr` alone
   */
  instant(expr: string, time: Date, alone = false): Promise<Sample[]> {
    const signal = this.#options.signal;
    const send = (e: string) => this.#client.instantQuery(e, { time, signal });
    return alone ? this.#sendAlone(send, expr) : this.#enqueue(`instant ${time.getTime()}`, expr, send);
  }

  /**
   * `expr` over `[start, end]` every `step` seconds, batched with the other range queries of that range.
   * @param window `start` and `end`, and `step` in seconds
   * @param alone send it in a request of its own
   * @throws what {@link PrometheusClient.rangeQuery} throws for `expr` alone
   */
  range(expr: string, window: { start: Date; end: Date; step: number }, alone = false): Promise<Series[]> {
    const { start, end, step } = window;
    const signal = this.#options.signal;
    const send = (e: string) => this.#client.rangeQuery(e, { start, end, step, signal });
    return alone
      ? this.#sendAlone(send, expr)
      : this.#enqueue(`range ${start.getTime()} ${end.getTime()} ${step}`, expr, send);
  }

  #enqueue<T extends Item>(key: string, expr: string, send: Queue<T>['send']): Promise<T[]> {
    return new Promise<T[]>((resolve, reject) => {
      let queue = this.#queues.get(key) as Queue<T> | undefined;
      if (!queue) {
        queue = { members: [], send };
        this.#queues.set(key, queue as unknown as Queue<Item>);
      }
      queue.members.push({ expr, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const queues = [...this.#queues.values()];
    this.#queues.clear();
    for (const queue of queues) for (const chunk of chunks(queue.members)) void this.#sendChunk(queue.send, chunk);
  }

  async #sendChunk<T extends Item>(send: Queue<T>['send'], chunk: Member<T>[]): Promise<void> {
    if (chunk.length === 1) return settle(chunk[0]!, this.#sendAlone(send, chunk[0]!.expr));
    const query = combineQueries(chunk.map((m) => m.expr));
    try {
      this.#requests++;
      const { result, warnings } = await send(query);
      if (warnings.length > 0) this.#options.onWarnings?.(query, warnings);
      const parts = splitAnswer(result, chunk.length);
      if (parts) return chunk.forEach((m, i) => m.resolve(parts[i]!));
    } catch (err) {
      if (!memberMayHaveCaused(err)) return chunk.forEach((m) => m.reject(err));
    }
    await Promise.all(chunk.map((m) => settle(m, this.#sendAlone(send, m.expr))));
  }

  async #sendAlone<T>(send: (expr: string) => Promise<QueryResult<T[]>>, expr: string): Promise<T[]> {
    this.#requests++;
    const { result, warnings } = await send(expr);
    if (warnings.length > 0) this.#options.onWarnings?.(expr, warnings);
    return result;
  }
}

function settle<T>(member: Member<T>, answer: Promise<T[]>): Promise<void> {
  return answer.then(member.resolve, member.reject);
}

/** Members in order, cut into batches within {@link MAX_BATCH_MEMBERS} and {@link MAX_BATCH_CHARS}. */
function chunks<T>(members: Member<T>[]): Member<T>[][] {
  const out: Member<T>[][] = [];
  let current: Member<T>[] = [];
  let chars = 0;
  for (const member of members) {
    if (current.length > 0 && (current.length >= MAX_BATCH_MEMBERS || chars + member.expr.length > MAX_BATCH_CHARS)) {
      out.push(current);
      current = [];
      chars = 0;
    }
    current.push(member);
    chars += member.expr.length;
  }
  if (current.length > 0) out.push(current);
  return out;
}
