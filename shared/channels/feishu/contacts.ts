/**
 * Who is who for the Feishu app, through the contact API, cached per process: the open_id of each email
 * a `mention` lists (a card @-mentions by id; urgent escalation needs ids), and the name of whoever
 * clicked a card's button. A lookup that fails degrades: an email is then mentioned as `<at email=…>`
 * (which the app's cards render too) and not escalated; a clicker is named by open_id.
 * @see https://open.feishu.cn/document/server-docs/contact-v3/user/batch_get_id
 * @see https://open.feishu.cn/document/server-docs/contact-v3/user/get
 */
import { FEISHU_MAX_EMAILS_PER_LOOKUP, type FeishuOpenApi } from './open-api.js';

/** How long a found id or name is kept, milliseconds (people rarely change email; a name change shows within a day). */
export const CONTACT_TTL_MS = 24 * 3600_000;
/** How long "nobody has this email" is kept, milliseconds (a new colleague appears within the hour). */
export const MISSING_TTL_MS = 3600_000;
/** Entries each cache holds at most (oldest dropped first). */
const MAX_ENTRIES = 1000;

type Entry = { value: string | undefined; untilMs: number };

/** A small map whose entries expire and whose size is bounded. */
class ExpiringCache {
  readonly #entries = new Map<string, Entry>();
  get(key: string, nowMs: number): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.untilMs > nowMs) return entry;
    this.#entries.delete(key);
    return undefined;
  }
  set(key: string, value: string | undefined, untilMs: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, untilMs });
    if (this.#entries.size > MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
  }
}

export class FeishuContacts {
  readonly #ids = new ExpiringCache();
  readonly #names = new ExpiringCache();

  constructor(
    readonly api: FeishuOpenApi,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The open_id of each email, from the cache or the contact API (50 a request).
   * @returns found ids by email (lower case); emails of nobody are absent
   * @throws the API's `DeliveryError` when a lookup fails (no scope, Feishu down); nothing is cached then
   */
  async openIds(emails: string[], signal: AbortSignal): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const missing: string[] = [];
    for (const email of new Set(emails.map((e) => e.toLowerCase()))) {
      const cached = this.#ids.get(email, this.now());
      if (!cached) missing.push(email);
      else if (cached.value) found.set(email, cached.value);
    }
    for (let i = 0; i < missing.length; i += FEISHU_MAX_EMAILS_PER_LOOKUP) {
      const batch = missing.slice(i, i + FEISHU_MAX_EMAILS_PER_LOOKUP);
      const ids = await this.api.openIdsByEmail(batch, signal);
      for (const email of batch) {
        const id = ids.get(email);
        this.#ids.set(email, id, this.now() + (id ? CONTACT_TTL_MS : MISSING_TTL_MS));
        if (id) found.set(email, id);
      }
    }
    return found;
  }

  /** The user's name, or `undefined` when the contact API does not say (no scope, out of the app's contact range). */
  async name(openId: string, signal: AbortSignal): Promise<string | undefined> {
    const cached = this.#names.get(openId, this.now());
    if (cached) return cached.value;
    try {
      const name = await this.api.userName(openId, signal);
      this.#names.set(openId, name, this.now() + (name ? CONTACT_TTL_MS : MISSING_TTL_MS));
      return name;
    } catch {
      // Not cached: a time-out or an outage should not name the next clicker by id for an hour.
      return undefined;
    }
  }
}
