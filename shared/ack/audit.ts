/**
 * `GET /v1/alerts/:fingerprint`: an alert's stored state and history (notifications per channel,
 * acknowledgement, silence, escalation, resolve), for people and scripts. Protected by the same
 * bearer token as the webhook (`WEBHOOK_TOKEN`).
 */
import { Hono, type MiddlewareHandler } from 'hono';
import type { AlertStores } from '../store/alert-record.js';

/** History events returned, newest kept. */
export const AUDIT_HISTORY_LIMIT = 200;

/**
 * @param auth the webhook's bearer-token middleware (`requireBearer`), so both refuse alike
 * @returns a sub-app answering `200 {fingerprint, record, history}` or `404 {error}`
 */
export function auditRoutes(stores: AlertStores, auth: MiddlewareHandler, now: () => number): Hono {
  const app = new Hono();
  app.use(auth);
  app.get('/:fingerprint', async (c) => {
    const fingerprint = c.req.param('fingerprint');
    const record = await stores.records.get(fingerprint, now());
    if (!record) return c.json({ error: `no record of alert ${fingerprint} (never notified, or expired)` }, 404);
    const history = await stores.history.last(fingerprint, AUDIT_HISTORY_LIMIT, now());
    return c.json({ fingerprint, record, history }, 200, { 'cache-control': 'no-store' });
  });
  return app;
}
