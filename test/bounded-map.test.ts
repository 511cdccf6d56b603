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
