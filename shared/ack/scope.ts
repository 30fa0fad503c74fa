/**
 * The alerts a verified link covers: the fingerprints its token carries, or — for a storm digest's
 * link — the stored alert set it names (`shared/store/alert-set.ts`). The page and the Slack app's
 * button acknowledge the same scope.
 */
import type { Logger } from '../core/logger.js';
import type { AlertSetStore } from '../store/alert-set.js';
import type { AckClaims } from './token.js';

/** What a link covers; `list` when it is longer than one page or names a set. */
export interface Scope {
  fingerprints: string[];
  /** `partial`: the set could not be found, so only the `named` alerts the token carries are covered. */
  list?: { total: number; partial?: { named: number } };
}

/**
 * @param pageSize a list longer than this is paged
 * @param nowMs epoch milliseconds
 * @throws the store's error (nothing was changed; the caller answers 503)
 */
export async function linkScope(
  claims: AckClaims,
  deps: { sets?: AlertSetStore; logger: Logger },
  pageSize: number,
  nowMs: number,
): Promise<Scope> {
  if (!claims.set)
    return {
      fingerprints: claims.fingerprints,
      ...(claims.fingerprints.length > pageSize && { list: { total: claims.fingerprints.length } }),
    };
  const set = deps.sets && (await deps.sets.get(claims.set.id, nowMs));
  if (!set) {
    // Its write failed after the link was signed, or it expired: the link's own first alerts remain.
    deps.logger.warn('alert set not found', {
      set: claims.set.id,
      group: claims.group,
      named: claims.fingerprints.length,
      alerts: claims.set.alerts,
    });
    return {
      fingerprints: claims.fingerprints,
      list: { total: claims.set.alerts, partial: { named: claims.fingerprints.length } },
    };
  }
  return { fingerprints: set.fingerprints, list: { total: set.fingerprints.length } };
}
