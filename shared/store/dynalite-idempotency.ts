/**
 * `TransactWriteItems` idempotency for the dynalite emulation (`dynalite-transactions.ts`), as the API reference
 * describes `ClientRequestToken`.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken
 */
type Item = Record<string, unknown>;

/**
 * `ClientRequestToken`s of applied transactions (the AWS SDK sets one per command, kept across its retries):
 * within 10 minutes the same token and request succeed again without being applied again, the same token
 * with another request is an `IdempotentParameterMismatchException`.
 */
export class Tokens {
  static readonly WINDOW_MS = 10 * 60_000;
  readonly #applied = new Map<string, { request: string; at: number }>();

  check(request: Item): 'new' | 'repeat' | 'mismatch' {
    const now = Date.now();
    for (const [token, seen] of this.#applied) if (now - seen.at > Tokens.WINDOW_MS) this.#applied.delete(token);
    const seen = typeof request.ClientRequestToken === 'string' ? this.#applied.get(request.ClientRequestToken) : undefined;
    if (!seen) return 'new';
    return seen.request === payload(request) ? 'repeat' : 'mismatch';
  }

  remember(request: Item): void {
    if (typeof request.ClientRequestToken === 'string') this.#applied.set(request.ClientRequestToken, { request: payload(request), at: Date.now() });
  }
}

/** The request as idempotency compares it: everything but its token. */
function payload(request: Item): string {
  const { ClientRequestToken: _, ...rest } = request;
  return JSON.stringify(rest);
}
