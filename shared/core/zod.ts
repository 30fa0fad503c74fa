/**
 * zod for every schema of the product: `zod/mini`, zod 4's functional API (`z.optional(s)`,
 * `s.check(z.minLength(1))`, `z.pipe(s, z.transform(f))`), with English messages.
 *
 * Why not classic `zod` (`s.optional().min(1)`): a classic schema carries every method of its kind,
 * and building one costs several times a mini one. On the Lambda receiver's cold init the classic
 * build was 104 KB of the 646 KB loaded and ~15 % of the CPU (`npm run bench -- floor`).
 * The saving holds only while no module on that path imports classic `zod`
 * (test/infra/lambda-zod-mini.test.ts checks the bundles).
 *
 * Classic registers English messages when its first schema is built; mini registers none (every
 * message would read `Invalid input`), so this module does, once, before any schema parses.
 * Messages are part of the contract: configuration errors, the routing file's problems and the
 * webhook's 400 bodies quote them.
 * @see https://zod.dev/packages/mini
 */
import en from 'zod/v4/locales/en.js';
import * as z from 'zod/mini';

// The one locale by its own path: `z.locales.en` would keep every locale in the bundle (~250 KB).
z.config(en());

export * from 'zod/mini';
