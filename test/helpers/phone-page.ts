/**
 * The acknowledgement page as a phone shows it, for the end-to-end tests in headless Chromium: the app
 * of an ack harness served on a loopback socket, Chromium at phone width, a page opened with its console
 * errors collected, and the check that nothing on it is wider than the screen.
 */
import type { Server } from 'node:http';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { serveApp } from '../../shared/http/server.js';
import { launchChromium, type HeadlessChromium } from './chromium.js';

/** The phone's screen, CSS pixels. */
export const PHONE = { width: 375, height: 740 };

/** Serves `app` on `127.0.0.1:port`; resolves once it listens. */
export function serveOnLoopback(app: Parameters<typeof serveApp>[0], port: number): Promise<Server> {
  return new Promise((resolve) => {
    const server = serveApp(app, { port, hostname: '127.0.0.1' }, () => resolve(server));
  });
}

/** Closes `server` (if it was started). */
export function closeServer(server: Server | undefined): Promise<void> {
  return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
}

/** Headless Chromium as a phone: {@link PHONE}'s viewport, touch, a mobile viewport, 2× pixels; `locale` as given. */
export function launchPhone(name: string, locale?: string): Promise<HeadlessChromium> {
  return launchChromium(name, {
    viewport: PHONE,
    isMobile: true,
    hasTouch: true,
    deviceScaleFactor: 2,
    ...(locale && { locale }),
  });
}

/**
 * Collects the page's console errors into `errors` as `text url`. The browser's own favicon request is
 * not the page's (the service serves none).
 */
export function collectConsoleErrors(page: Page, errors: string[]): void {
  page.on(
    'console',
    (m) =>
      void (
        m.type() === 'error' &&
        !m.location().url.endsWith('/favicon.ico') &&
        errors.push(`${m.text()} ${m.location().url}`)
      ),
  );
}

/** Opens `url` in a new page of `browser`, its console errors collected into `errors`; expects HTTP 200. */
export async function openPage(browser: HeadlessChromium, url: string, errors: string[]): Promise<Page> {
  const page = await browser.newPage();
  collectConsoleErrors(page, errors);
  const res = await page.goto(url);
  expect(res?.status()).toBe(200);
  return page;
}

/** Nothing on the page is wider than the phone's screen: no horizontal scroll, no element past its right edge. */
export async function expectFitsWidth(page: Page): Promise<void> {
  // Evaluated in the page (as strings: the tests are compiled without the DOM's types).
  const { scrollWidth, innerWidth } = (await page.evaluate(
    '({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })',
  )) as { scrollWidth: number; innerWidth: number };
  expect(innerWidth).toBe(PHONE.width);
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
  const overflowing = await page.evaluate(
    `[...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > ${PHONE.width} + 0.5).map((e) => e.outerHTML.slice(0, 80))`,
  );
  expect(overflowing).toEqual([]);
}
