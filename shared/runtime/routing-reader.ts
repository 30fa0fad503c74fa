/**
 * The routing file's reader (`shared/routing/load.ts`: the YAML parser, the routing schema, the RE2
 * engine of its matchers; ~280 KB of the 1 MB the Lambda's cold init loaded), loaded only where
 * `ROUTING_FILE` is set: a cold start loads only what the first request needs, and a deployment without a
 * routing file never needs it. The file is still read and validated once, at start-up: the entry
 * points call {@link loadRoutingReader} (through `withSecretSettings` or `loadConfigWhenReady`)
 * before the synchronous `loadConfig`.
 */
type RoutingReader = typeof import('../routing/load.js');

let reader: RoutingReader | undefined;

/** Loads the reader once (an `await import()`: a chunk of its own in the Lambda bundle). */
export async function loadRoutingReader(): Promise<RoutingReader> {
  reader ??= await import('../routing/load.js');
  return reader;
}

/**
 * The loaded reader.
 * @throws Error when {@link loadRoutingReader} has not been awaited yet (a wiring mistake, not a setting's)
 */
export function routingReader(): RoutingReader {
  if (!reader)
    throw new Error(
      'ROUTING_FILE is set but the routing reader is not loaded: await loadRoutingReader() before loadConfig()',
    );
  return reader;
}
