/**
 * Objects of a set of names known only at start-up, made by an object
 * literal compiled for those names. V8 gives such an object its shape in one
 * step, with room for every name in the object itself; an object that starts
 * empty and gains the names by keyed stores in a loop shared by several name
 * sets makes those stores megamorphic (a lookup in V8's stub cache for each),
 * and becomes a hash table at its 20th property.
 */

/**
 * A function that makes an object of `names`, each taking the value at its
 * position in `values`. The names are JSON-quoted into the code and no value
 * enters it; `__proto__` is written as a computed key, which makes an own
 * property (quoted, a literal would set the prototype instead).
 */
export function objectLiteral<V> (names: readonly string[]): (values: readonly V[]) => Record<string, V> {
  const members = names.map((name, i) => `${name === '__proto__' ? '["__proto__"]' : JSON.stringify(name)}: values[${i}]`)
  // eslint-disable-next-line no-new-func
  return new Function('values', `return { ${members.join(', ')} }`) as (values: readonly V[]) => Record<string, V>
}
