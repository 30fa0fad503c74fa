/**
 * A channel whose code is loaded apart from the settings that configure it: the routing file's schema
 * and the settings secret name every channel type, so every type's settings are loaded at start, but
 * a deployment that configures no PagerDuty need not load, compile and build its renderer and sender
 * (`npm run bench -- floor`: what a Lambda's cold init loads). esbuild puts a module reached only
 * through `await import()` in a chunk of its own.
 *
 * A configured channel is loaded at start all the same ({@link channelsReady}, awaited by the
 * entries before they serve), so its first webhook does not pay for it.
 */
import { lazyAsync } from '../core/lazy.js';
import type { Channel } from './channel.js';

export interface DeferredChannel extends Channel {
  /** Loads the channel's code now (idempotent); a failed load is tried again by the next call or send. */
  ready(): Promise<void>;
}

/**
 * @param name the ledger name (known before the code is loaded)
 * @param load resolves to the channel itself
 */
export function deferredChannel(name: string, load: () => Promise<Channel>): DeferredChannel {
  const loaded = lazyAsync(load);
  return {
    name,
    ready: async () => void (await loaded()),
    send: async (notification, signal) => (await loaded()).send(notification, signal),
  };
}

/**
 * Loads every deferred channel among `channels` (call once at start, before serving).
 * @throws the first load's error (a chunk missing from the deployment)
 */
export async function channelsReady(channels: readonly Channel[]): Promise<void> {
  await Promise.all(channels.map((c) => (c as Partial<DeferredChannel>).ready?.()));
}
