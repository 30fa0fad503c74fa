/**
 * The checks that run on a schedule, never in a webhook (the heartbeat check, `npm start`'s escalation
 * timers), one chunk for both, loaded on the first check: esbuild splits the modules they share with the
 * webhook's path into a chunk per combination of entries that reach them, and every extra chunk is one
 * more file cold init loads.
 */
export { checkEscalation } from '../escalation/escalation.js';
export { checkHeartbeats } from '../heartbeat/check.js';
