// A field whose value is one of two object variants told apart by `kind`: what unions of objects do to
// validation (the faults of the variant meant) and to merge patches (the variants' members do not mix).
import { Type } from '@sinclair/typebox'

export const Shape = Type.Union([
  Type.Object({ kind: Type.Literal('circle'), r: Type.Number() }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('square'), side: Type.Number() }, { additionalProperties: false })
])
