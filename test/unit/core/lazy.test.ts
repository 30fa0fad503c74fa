import { describe, expect, it } from 'vitest';
import { lazy } from '../../../shared/core/lazy.js';

describe('lazy', () => {
  it('builds nothing until the first call, then once, keeping even an undefined value', () => {
    let built = 0;
    const value = lazy(() => {
      built++;
      return undefined;
    });
    expect(built).toBe(0);
    expect(value()).toBeUndefined();
    expect(value()).toBeUndefined();
    expect(built).toBe(1);
  });
});
