import t from 'tap'
import { catalogCodes } from '../src/errors.js'

t.test('every catalog code is unique and named RSY_ERR_<NOUN>_<REASON>', async t => {
  const codes = catalogCodes()
  t.ok(codes.length > 5)
  t.equal(new Set(codes).size, codes.length)
  for (const code of codes) t.match(code, /^RSY_ERR_[A-Z]+_[A-Z_]+$/)
})
