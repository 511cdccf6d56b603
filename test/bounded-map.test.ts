import t from 'tap'
import { BoundedMap } from '../src/bounded-map.js'

t.test('a bounded map forgets its oldest entry when a new key would overfill it', async t => {
  const map = new BoundedMap<string, number>(2)
  map.set('a', 1).set('b', 2)
  map.set('a', 10)
  t.same([...map], [['a', 10], ['b', 2]], 'replacing a value evicts nothing')
  map.set('c', 3)
  t.same([...map], [['b', 2], ['c', 3]], 'the oldest key went first')
  t.equal(map.size, 2)
})

t.test('remember computes a value once, holds it within the bound, and never holds undefined', async t => {
  const map = new BoundedMap<string, number>(2)
  let computed = 0
  const compute = (value: number) => () => { computed++; return value }
  t.equal(map.remember('a', compute(1)), 1)
  t.equal(map.remember('a', compute(99)), 1, 'the held value, not a new one')
  t.equal(computed, 1)
  map.remember('b', compute(2))
  map.remember('c', compute(3))
  t.same([...map], [['b', 2], ['c', 3]], 'the bound holds')
  t.equal(map.remember('d', () => undefined), undefined)
  t.notOk(map.has('d'), 'an undefined result is not held')
  t.same([...map], [['b', 2], ['c', 3]], 'and evicts nothing')
})
