/**
 * A readers–writer gate in front of dynalite's request listener, for the `TransactWriteItems` emulation
 * (`dynalite-transactions.ts`): ordinary requests run side by side as dynalite runs them, and a
 * transaction runs alone — it starts once every request before it has answered, and no request after it
 * starts until it has answered. That is how the emulation is atomic: no other request of that dynalite
 * reads or writes between a transaction's condition checks and its last write.
 *
 * Our own code because no library wraps an `http.Server` listener this way; the admission order is
 * first come, first served (a waiting transaction holds back later requests, so it is never starved).
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';

export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

interface Waiter {
  alone: boolean;
  start: () => void;
}

/** The gate: {@link Gate.enter} for an ordinary request, {@link Gate.enterAlone} for a transaction. */
export class Gate {
  #running = 0;
  #alone = false;
  readonly #queue: Waiter[] = [];

  /** Runs `work` alongside other ordinary requests, after any transaction before it; `done` ends its turn. */
  enter(work: (done: () => void) => void): void {
    // The usual case (no transaction waiting or running) skips the queue.
    if (this.open) {
      this.#running += 1;
      work(once(() => this.#leave()));
      return;
    }
    this.#admit({ alone: false, start: () => work(once(() => this.#leave())) });
  }

  /** Runs `work` with nothing else in flight; `done` ends its turn. */
  enterAlone(work: (done: () => void) => void): void {
    this.#admit({ alone: true, start: () => work(once(() => this.#leave())) });
  }

  /** Whether a request arriving now would start at once (nothing waits, no transaction runs). */
  get open(): boolean {
    return !this.#alone && this.#queue.length === 0;
  }

  #admit(waiter: Waiter): void {
    this.#queue.push(waiter);
    this.#next();
  }

  #leave(): void {
    this.#running -= 1;
    this.#alone = false;
    this.#next();
  }

  #next(): void {
    while (this.#queue.length && !this.#alone) {
      const head = this.#queue[0]!;
      if (head.alone && this.#running > 0) return;
      this.#queue.shift();
      this.#running += 1;
      this.#alone = head.alone;
      head.start();
    }
  }
}

/**
 * The request as dynalite's listener reads it (`method`, `url`, `headers`, its body events), from a body
 * already read: a request held back by the gate has had its body read by then.
 */
export function replayed(req: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = Object.assign(new EventEmitter(), { method: req.method, url: req.url, headers: req.headers });
  queueMicrotask(() => {
    if (body.length) copy.emit('data', body);
    copy.emit('end');
  });
  return copy as unknown as IncomingMessage;
}

/** Reads a request's whole body (the listener must be attached before the body's events come). */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Calls `done` when the response ends (dynalite answers every request with one `end`). */
export function onEnd(res: ServerResponse, done: () => void): ServerResponse {
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.end = ((...args: unknown[]) => {
    const out = end(...args);
    done();
    return out;
  }) as ServerResponse['end'];
  return res;
}

function once(f: () => void): () => void {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    f();
  };
}
