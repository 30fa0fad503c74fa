/** The plain-loop parse of common answers gives exactly what the zod schemas give, and leaves everything else to them. */
import { describe, expect, it } from 'vitest';
import { fastSuccess } from '../../../shared/prometheus/fast-parse.js';
import { envelopeSchema, queryDataSchema } from '../../../shared/prometheus/wire.js';

const viaSchemas = (json: unknown) => {
  const envelope = envelopeSchema.parse(json);
  return { data: queryDataSchema.parse(envelope.data), warnings: envelope.warnings ?? [] };
};
const body = (data: unknown, extra: Record<string, unknown> = {}) =>
  JSON.parse(JSON.stringify({ status: 'success', data, ...extra }));

const VALID = {
  'a vector with every special value': body({
    resultType: 'vector',
    result: ['1', '0.25', '-1e-05', '.5', '7.', 'NaN', '+Inf', 'Inf', '-Inf'].map((v, i) => ({
      metric: { __name__: 'm', i: String(i) },
      value: [1764420000.123, v],
    })),
  }),
  'an empty vector': body({ resultType: 'vector', result: [] }),
  'a vector with extra fields (dropped) and warnings': body(
    { resultType: 'vector', result: [{ metric: {}, value: [1, '2'], extra: 1 }], stats: {} },
    { warnings: ['partial'] },
  ),
  'a matrix, one series without values': body({
    resultType: 'matrix',
    result: [
      {
        metric: { a: 'b' },
        values: [
          [1, '1'],
          [2, 'NaN'],
        ],
      },
      { metric: { a: 'c' } },
    ],
  }),
  'a scalar': body({ resultType: 'scalar', result: [5, '3.5'] }),
};

const LEFT_TO_SCHEMAS = {
  'an error envelope': { status: 'error', errorType: 'bad_data', error: 'parse error' },
  'a string result': body({ resultType: 'string', result: [1, 'x'] }),
  'a numeric sample value': body({ resultType: 'vector', result: [{ metric: {}, value: [1, 2] }] }),
  'a sample value that is no float': body({ resultType: 'vector', result: [{ metric: {}, value: [1, '1,5'] }] }),
  'a time as text': body({ resultType: 'vector', result: [{ metric: {}, value: ['1', '2'] }] }),
  'a point of three': body({ resultType: 'vector', result: [{ metric: {}, value: [1, '2', 3] }] }),
  'a label value that is a number': body({ resultType: 'vector', result: [{ metric: { a: 1 }, value: [1, '2'] }] }),
  'no metric': body({ resultType: 'vector', result: [{ value: [1, '2'] }] }),
  'a __proto__ label': JSON.parse(
    '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__proto__":"x"},"value":[1,"2"]}]}}',
  ),
  'a native histogram': body({ resultType: 'vector', result: [{ metric: {}, histogram: [1, { count: '1' }] }] }),
  'warnings that are not text': body({ resultType: 'vector', result: [] }, { warnings: [1] }),
  'a matrix point that is no float': body({ resultType: 'matrix', result: [{ metric: {}, values: [[1, 'x']] }] }),
  'no data': { status: 'success' },
};

describe('fastSuccess', () => {
  for (const [name, json] of Object.entries(VALID)) {
    it(`parses ${name} exactly as the schemas do`, () => {
      expect(fastSuccess(json)).toEqual(viaSchemas(json));
    });
  }
  for (const [name, json] of Object.entries(LEFT_TO_SCHEMAS)) {
    it(`leaves ${name} to the schemas`, () => {
      expect(fastSuccess(json)).toBeUndefined();
    });
  }
});
