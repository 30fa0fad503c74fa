/**
 * The routes people click (the acknowledgement page, the Slack app's buttons, the charts), one chunk
 * for all three: `app.ts` loads it on the first request to any of them (`lazy-routes.ts`). One chunk,
 * not three, because esbuild splits the modules these share with the webhook's path into a chunk per
 * combination of entries that reach them, and every extra chunk is one more file cold init loads.
 */
export { ackRoutes } from '../ack/routes.js';
export { chartRoutes } from '../chart/routes.js';
export { slackInteractionRoutes } from '../ack/slack-interactions.js';
