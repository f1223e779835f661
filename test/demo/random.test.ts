import t from 'tap';
import { Random } from '../../src/demo/random.js';

const ids = (rng: Random, count: number) => Array.from({ length: count }, () => rng.id('wcl'));

t.test(
  'ids are keyed by their scope: the same in one agency, none alike in two, and the rest of the draws unchanged',
  async (t) => {
    const acme = ids(new Random('demo-collections:300', 'acme'), 1000);
    t.match(acme[0], /^wcl_[0-9a-hjkmnp-tv-z]{16}$/);
    t.same(ids(new Random('demo-collections:300', 'acme'), 1000), acme, 'same seed, same agency: same ids');
    t.equal(new Set(acme).size, 1000, 'distinct within the agency');
    const other = ids(new Random('demo-collections:300', 'acme-west'), 1000);
    t.same(
      other.filter((id) => acme.includes(id)),
      [],
      'another agency seeded alike shares none',
    );
    const a = new Random('demo-agency:small', 'acme');
    const b = new Random('demo-agency:small', 'acme-west');
    a.id('pat');
    b.id('pat');
    t.same([a.int(0, 1e9), a.digits(6)], [b.int(0, 1e9), b.digits(6)], 'what follows an id is drawn alike in both');
  },
);

t.test('a derived sequence draws ids in the same scope; a sequence without a scope draws none', async (t) => {
  const derived = new Random('demo-agency:small', 'acme').derive('physician-orders:M0100001');
  t.same(derived.id('ord'), new Random('physician-orders:M0100001', 'acme').id('ord'));
  t.throws(() => new Random('demo-era').id('ord'), /no id scope: ids are drawn per agency/);
});
