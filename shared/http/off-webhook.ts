/**
 * What the receiver serves or runs apart from webhooks, in one chunk loaded on first use of any of it
 * (`await import()`): the routes people click (the acknowledgement page, the Slack and Feishu apps' buttons, the
 * charts: `app.ts` through `lazy-routes.ts`) and the scheduled checks (heartbeats, `npm start`'s
 * escalation timers: `shared/runtime`). One chunk, not five: esbuild splits the modules these share
 * with the webhook's path into a chunk per combination of entries that reach them, and each chunk is one
 * more file cold init loads (Node 20's loader: ~0.5–1 ms of CPU each, `npm run bench -- floor`).
 */
export { ackRoutes } from '../ack/routes.js';
export { slackInteractionRoutes } from '../ack/slack-interactions.js';
export { feishuCallbackRoutes } from '../ack/feishu-callback.js';
export { chartRoutes } from '../chart/routes.js';
export { checkEscalation } from '../escalation/escalation.js';
export { checkHeartbeats } from '../heartbeat/check.js';
export { inProcessDispatch, runSetStep, runStepThenDispatch } from '../ack/set-job.js';
