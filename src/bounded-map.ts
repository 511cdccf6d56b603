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

  /** The value held for `key`, or what `compute` gives, now held too. An undefined result is not held: it is asked for again. */
  remember (key: K, compute: () => V): V
  remember (key: K, compute: () => V | undefined): V | undefined
  remember (key: K, compute: () => V | undefined): V | undefined {
    let value = this.get(key)
    if (value === undefined) {
      value = compute()
      if (value !== undefined) this.set(key, value)
    }
    return value
  }
}
