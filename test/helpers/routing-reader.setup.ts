/**
 * Every test file may call the synchronous `loadConfig` with a `ROUTING_FILE`: the entry points
 * await the routing reader first (`loadConfigWhenReady`); tests get it loaded here, once per file.
 */
import { loadRoutingReader } from '../../shared/runtime/routing-reader.js';

await loadRoutingReader();
