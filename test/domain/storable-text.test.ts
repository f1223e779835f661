import t from 'tap';
import {
  holdsUnstorableText,
  isStorableText,
  storableText,
  unstorableTextPointers,
} from '../../src/domain/storable-text.js';

t.test('storable: any text but a NUL or a surrogate without its pair', async (t) => {
  for (const text of ['', 'plain', 'Zoë 📞', '\ud83d\ude00', '\ufffd', '\u0001\u001f'])
    t.ok(isStorableText(text), JSON.stringify(text));
  for (const text of ['\u0000', 'a\u0000b', '\ud800', 'x\udc00', '\ude00\ud83d', '\ud83d\ud83d\ude00x\ud800'])
    t.notOk(isStorableText(text), JSON.stringify(text));
});

t.test('storableText replaces each NUL and lone surrogate with U+FFFD and keeps pairs', async (t) => {
  t.equal(storableText('Jane \u0000 \ud800 \udc00 \ud83d\ude00'), 'Jane \ufffd \ufffd \ufffd \ud83d\ude00');
  t.equal(
    storableText('\ud83d\ud83d\ude00'),
    '\ufffd\ud83d\ude00',
    'a high surrogate before a pair: only the lone one',
  );
  const clean = 'unchanged';
  t.equal(storableText(clean), clean);
});

t.test('pointers name every string and member name that cannot be stored, as JSON pointers', async (t) => {
  const body = { title: 'ok', notes: 'a\u0000', 'a/b~\u0000': 1, list: ['x', '\ud800', { deep: '\udc00' }] };
  t.same(unstorableTextPointers(body), ['/notes', '/a~1b~0\u0000', '/list/1', '/list/2/deep']);
  t.same(unstorableTextPointers('\u0000'), ['']);
  t.same(unstorableTextPointers(body, 2), ['/notes', '/a~1b~0\u0000'], 'at most the limit');
  t.ok(holdsUnstorableText(body));
  t.notOk(holdsUnstorableText({ a: ['b', { c: 1, d: null, e: 'Zoë' }] }));
});
