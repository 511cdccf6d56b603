/**
 * Checks of a definition's field schemas that only a schema validator can
 * make: whether a field's own value may be null, and whether its default and
 * the definition's example satisfy the schemas they belong to. Mistakes of the
 * definition, refused when it loads (define.ts), not met by clients as 400s
 * or 500s.
 */
import type { TObject, TSchema } from '@sinclair/typebox'
import { ValueErrorType } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { isDecimalMultiple } from '../http/decimal-multiple.js'

const MULTIPLE_OF_ERRORS = new Set([ValueErrorType.NumberMultipleOf, ValueErrorType.IntegerMultipleOf])

/**
 * Whether a field's own value may be null. A column holds a value or nothing,
 * so a null would be stored as nothing and read back absent (a value changed
 * in storage), and a required nullable field would fail its NOT NULL column.
 * Nulls inside an object or array field are kept as sent (JSON).
 */
export function allowsNull (schema: TSchema): boolean {
  const { type, anyOf, oneOf, nullable } = schema as { type?: unknown, anyOf?: TSchema[], oneOf?: TSchema[], nullable?: unknown }
  if (type === 'null' || nullable === true || (Array.isArray(type) && type.includes('null'))) return true
  if (schema.const === null || (Array.isArray(schema.enum) && schema.enum.includes(null))) return true
  if ([...anyOf ?? [], ...oneOf ?? []].some(allowsNull)) return true
  // What states no type at all (Type.Unknown, Type.Any) takes null too.
  try {
    return Value.Check(schema, null)
  } catch {
    // A kind TypeBox cannot check (Type.Unsafe): the keywords above are all it can say.
    return false
  }
}

/** What TypeBox finds wrong with `value` against `schema`, formats aside: those are the app's Ajv formats, which TypeBox does not know. */
function faultsOf (schema: TSchema, value: unknown): string[] {
  try {
    return [...Value.Errors(schema, value)]
      .filter(error => error.type !== ValueErrorType.StringFormat && error.type !== ValueErrorType.StringFormatUnknown)
      // TypeBox tests multipleOf in binary floating point, where 0.3 is no multiple of 0.1; requests are checked in decimal.
      .filter(error => !(MULTIPLE_OF_ERRORS.has(error.type) && isDecimalMultiple(error.value as number, error.schema.multipleOf as number)))
      .map(error => error.path === '' ? error.message : `${error.path}: ${error.message}`)
  } catch {
    // A kind TypeBox cannot check (Type.Unsafe): left to the requests' own validation.
    return []
  }
}

/**
 * The fields whose default their own schema refuses, each with the faults.
 * Such a default would answer every create that leaves the field out with a
 * 400 about a value the client never sent.
 */
export function defaultFaults (fields: TObject): Array<[string, string[]]> {
  return Object.entries(fields.properties)
    .filter(([, schema]) => 'default' in schema)
    .map(([name, schema]): [string, string[]] => [name, faultsOf(schema, schema.default)])
    .filter(([, faults]) => faults.length > 0)
}

/** What is wrong with an example as a create body (defaults filled in): the documentation would show clients a body that fails. */
export function exampleFaults (fields: TObject, example: unknown): string[] {
  return faultsOf(fields, Value.Default(fields, structuredClone(example)))
}
