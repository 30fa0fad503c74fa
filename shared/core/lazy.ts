/**
 * A value built on its first use instead of at import. For module-level objects that are costly to
 * build and not needed by every invocation: a Lambda's cold init runs every module's top level, and the
 * first `Intl` object of a process alone loads ICU data (~20–30 ms; docs/performance.md).
 */

/**
 * @param make builds the value, once (on the first call of the returned function)
 * @returns a function returning that value
 */
export function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  let made = false;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value as T;
  };
}

/**
 * Like {@link lazy}, for a value loaded asynchronously (a chunk's `await import()`): one load shared by
 * every caller while it runs; a failed load is not kept, so the next call loads again.
 * @param load loads the value (on the first call of the returned function, and after a failure)
 * @returns a function returning the load's promise
 */
export function lazyAsync<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    }));
}
