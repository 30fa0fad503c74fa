/**
 * Stack traces of the minified Lambda bundle, mapped to the TypeScript sources when they are
 * formatted, not at cold init. `node --enable-source-maps` parses every loaded file's source map
 * when the file loads (the receiver's 1.6 MB map: ~200 ms of CPU per cold start on Node 20, for
 * errors that most invocations never see). Here a file's map (`<file>.map`, beside it in the asset)
 * is read and parsed the first time a trace passes through that file, with Node's own `SourceMap`.
 *
 * Own code rather than a package (`source-map-support`): Node's `module.SourceMap` does the decoding;
 * this is only V8's `Error.prepareStackTrace` hook around it.
 * @see https://nodejs.org/api/module.html#class-modulesourcemap
 * @see https://v8.dev/docs/stack-trace-api
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

const maps = new Map<string, SourceMap | undefined>();

/** The parsed map of a `file://` URL under `root`, once per file; `undefined` without one. */
function mapOf(url: string, root: string): SourceMap | undefined {
  if (!url.startsWith(root)) return undefined;
  if (!maps.has(url)) {
    let map: SourceMap | undefined;
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8')));
    } catch {
      map = undefined;
    }
    maps.set(url, map);
  }
  return maps.get(url);
}

interface Origin {
  originalSource?: string;
  originalLine?: number;
  originalColumn?: number;
  name?: string;
}

/** Where in the sources a frame's position was, per the file's map; `undefined` outside the bundle. */
function originOf(frame: NodeJS.CallSite | undefined, root: string): Origin | undefined {
  const url = frame?.getFileName();
  const line = frame?.getLineNumber();
  const column = frame?.getColumnNumber();
  if (!url || !line || !column) return undefined;
  const origin = mapOf(url, root)?.findEntry(line - 1, column - 1) as Origin | undefined;
  return origin?.originalSource ? origin : undefined;
}

/**
 * One frame as V8 prints it, with the source position from the map. Its name: the original name at
 * the caller's call site (the next frame: `store.claim(…)` names `claim`), as Node's own source-map
 * support does, since the minified function's own name is meaningless.
 */
function formatFrame(frame: NodeJS.CallSite, caller: NodeJS.CallSite | undefined, root: string): string {
  const origin = originOf(frame, root);
  if (!origin) return `    at ${frame}`;
  const where = `${origin.originalSource!.replace(/^(\.\.\/)+/, '')}:${origin.originalLine! + 1}:${origin.originalColumn! + 1}`;
  const name = originOf(caller, root)?.name ?? frame.getFunctionName();
  return name ? `    at ${frame.isAsync() ? 'async ' : ''}${name} (${where})` : `    at ${where}`;
}

/**
 * Installs the mapping for the files under the directory of `moduleUrl` (the bundle's `index.mjs`
 * and its chunks). Frames of other files print as V8 prints them.
 * @param moduleUrl `import.meta.url` of the entry
 */
export function mapStackTraces(moduleUrl: string): void {
  const root = new URL('.', moduleUrl).href;
  Error.prepareStackTrace = (error: Error, frames: NodeJS.CallSite[]) => {
    let head: string;
    try {
      head = String(error);
    } catch {
      head = '<error>';
    }
    return [head, ...frames.map((f, i) => formatFrame(f, frames[i + 1], root))].join('\n');
  };
}
