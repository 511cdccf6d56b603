import { randomBytes } from 'node:crypto'
import t from 'tap'
import { cursorCodec } from '../../src/resources/cursor.js'

t.test('cursors are verified whether remembered or not, and only this key\'s are accepted', async t => {
  const codec = cursorCodec(randomBytes(32))
  const other = cursorCodec(randomBytes(32))
  const position = { sort: 'name,id', values: ['Road', 7] }
  const token = codec.encode(position)
  t.equal(codec.encode({ sort: 'name,id', values: ['Road', 7] }), token, 'the same position, the same cursor')
  t.same(codec.decode(token), position)
  t.equal(other.decode(token), undefined, 'another key\'s codec refuses it')
  const theirs = other.encode(position)
  t.not(theirs, token)
  t.equal(codec.decode(theirs), undefined, 'the same position signed with another key is refused, though this codec remembers its own')
  const [payload, signature] = token.split('.') as [string, string]
  t.equal(codec.decode(`${payload}.${signature.slice(0, -2)}AA`), undefined, 'an altered signature is refused')
  t.equal(codec.decode(`${Buffer.from('{"s":"name,id","v":["Road",8]}').toString('base64url')}.${signature}`), undefined, 'an altered position is refused')

  // Past what is remembered, cursors are checked by their signature alone.
  const many = Array.from({ length: 1500 }, (_, i) => codec.encode({ sort: 'id', values: [i] }))
  t.same(codec.decode(many[0]!), { sort: 'id', values: [0] })
  t.same(cursorCodec(Buffer.alloc(32, 1)).decode(cursorCodec(Buffer.alloc(32, 1)).encode(position)), position, 'a fresh codec with the same key (another process) verifies it')
})

t.test('a remembered position cannot be changed by whoever received it', async t => {
  const codec = cursorCodec(randomBytes(32))
  const values = ['Road', 7]
  const token = codec.encode({ sort: 'name,id', values })
  values[1] = 8
  const decoded = codec.decode(token)!
  t.same(decoded.values, ['Road', 7], 'the caller\'s array was copied')
  t.throws(() => { (decoded.values as unknown[])[1] = 9 }, TypeError)
  t.same(codec.decode(token)!.values, ['Road', 7])
})
