/**
 * Real Alertmanager 0.25 webhook bodies (test/fixtures/alertmanager), kept in the repository so a
 * fresh clone tests on its own.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { WebhookMessage } from '../../shared/alertmanager/schema.js';

const DIR = fileURLToPath(new URL('../fixtures/alertmanager/', import.meta.url));

export type FixtureName =
  | 'firing-kv-cache-critical'
  | 'firing-queue-backlog-two-models'
  | 'resolved-queue-backlog-two-models'
  | 'firing-gpu-memory-leak';

/** The fixture's raw JSON text, exactly as Alertmanager posted it. */
export function fixtureText(name: FixtureName): string {
  return readFileSync(`${DIR}${name}.json`, 'utf8');
}

/** A fresh, mutable copy of the fixture as an object. */
export function fixture(name: FixtureName): WebhookMessage {
  return JSON.parse(fixtureText(name)) as WebhookMessage;
}
