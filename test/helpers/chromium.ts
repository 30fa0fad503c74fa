/**
 * Headless Debian Chromium for the end-to-end tests, driven by playwright-core (no downloaded
 * browser): one launch, with the same quiet, offline flags, for every test that opens a page.
 * Each launch has its own throw-away profile directory, so cookies persist across its pages (as in a
 * user's browser) and never across tests.
 * @see https://playwright.dev/docs/api/class-browsertype#browser-type-launch-persistent-context
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContextOptions, type Page } from 'playwright-core';

/** Debian's package `chromium`. */
const CHROMIUM = '/usr/bin/chromium';
/** Flags for a quiet, offline, throw-away headless Chromium (as root in CI: no sandbox). */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A running browser: its pages share cookies. */
export interface HeadlessChromium {
  newPage(): Promise<Page>;
  /** Ends the browser (closing its keep-alive connections) and removes its profile; never throws. */
  close(): Promise<void>;
}

/**
 * Launches Chromium with a fresh profile directory.
 * @param name names the profile directory under the system's temporary folder (`<name>-chromium-…`)
 * @param options e.g. a phone's `viewport`, `isMobile`, `hasTouch`, `deviceScaleFactor`
 * @throws the launch's error (the profile directory is removed first)
 */
export async function launchChromium(name: string, options: BrowserContextOptions = {}): Promise<HeadlessChromium> {
  const profile = await mkdtemp(join(tmpdir(), `${name}-chromium-`));
  const removeProfile = () => rm(profile, { recursive: true, force: true }).catch(() => undefined);
  try {
    const context = await chromium.launchPersistentContext(profile, {
      ...options,
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    return {
      newPage: () => context.newPage(),
      close: async () => {
        await context.close().catch(() => undefined);
        await removeProfile();
      },
    };
  } catch (err) {
    await removeProfile();
    throw err;
  }
}
