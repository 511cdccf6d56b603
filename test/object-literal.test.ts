// Objects made by a literal compiled for their names (object-literal.ts): every name an own property, whatever it is.
import t from 'tap'
import { objectLiteral } from '../src/object-literal.js'

t.test('each name takes the value at its position, quoted whatever its characters', async t => {
  const make = objectLiteral<unknown>(['id', 'due date', 'a"b', 'x\\y', '1st'])
  t.same(make([1, '2026-01-01', null, undefined, true]), { id: 1, 'due date': '2026-01-01', 'a"b': null, 'x\\y': undefined, '1st': true })
  t.not(make([1]), make([1]), 'a new object each time')
})

t.test('__proto__ is an own property, never the prototype', async t => {
  const made = objectLiteral<unknown>(['__proto__', 'name'])([{ polluted: true }, 'n'])
  t.equal(Object.getPrototypeOf(made), Object.prototype)
  t.ok(Object.hasOwn(made, '__proto__'))
  t.same(Object.getOwnPropertyDescriptor(made, '__proto__')?.value, { polluted: true })
  t.equal((made as { polluted?: unknown }).polluted, undefined)
})
