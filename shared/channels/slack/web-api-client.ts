/**
 * What the Slack-app channel takes from `@slack/web-api`, named: the module `web-api.ts` loads with
 * `await import()` on the first post.
 *
 * Why a module of ours between: the package is CommonJS. Node's own `import()` of it gives its named
 * exports, but in the Lambda bundle the target of an `await import()` becomes a chunk of its own, and
 * esbuild makes a CommonJS target a chunk that exports only `default`, so `WebClient` was `undefined`
 * there (`TypeError from the Slack client`) while `npm start` worked. A static, named re-export is
 * resolved at build time instead. test/infra/lambda-bundle-inputs.test.ts fails on any `await import()`
 * of a CommonJS module.
 */
export { WebClient } from '@slack/web-api';
