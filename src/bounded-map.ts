/**
 * A Map that holds at most `limit` entries: adding a new key to a full map
 * first forgets the oldest (Maps iterate in insertion order). Every cache of
 * the service is one, so no input can grow memory without bound.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor (private readonly limit: number) {
    super()
  }

  override set (key: K, value: V): this {
    if (this.size >= this.limit && !this.has(key)) this.delete(this.keys().next().value!)
    return super.set(key, value)
  }
}
