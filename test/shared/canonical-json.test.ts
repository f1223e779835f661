import t from 'tap';
import { canonicalJson } from '../../src/shared/canonical-json.js';

t.test('canonical JSON: key order and undefined members do not matter, values and array order do', async (t) => {
  t.equal(canonicalJson({ b: 1, a: { d: [2, 1], c: 'x' } }), canonicalJson({ a: { c: 'x', d: [2, 1] }, b: 1 }));
  t.equal(canonicalJson({ a: 1, b: undefined }), canonicalJson({ a: 1 }));
  t.equal(
    canonicalJson(Object.assign(Object.create(null), { b: 2, a: 1 })),
    '{"a":1,"b":2}',
    'a query object without prototype',
  );
  t.not(canonicalJson({ a: [1, 2] }), canonicalJson({ a: [2, 1] }));
  t.not(canonicalJson({ a: '1' }), canonicalJson({ a: 1 }));
  t.not(canonicalJson({ a: null }), canonicalJson({}), 'null is a value, unlike undefined');
});
