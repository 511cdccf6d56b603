// A seeded pseudo-random source: a randomized test that fails can be replayed exactly from its seed.

export class Random {
  #state: number

  constructor (readonly seed: number) {
    this.#state = seed >>> 0
  }

  /** In [0, 1); mulberry32. */
  next (): number {
    this.#state = (this.#state + 0x6D2B79F5) >>> 0
    let x = this.#state
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }

  chance (probability: number): boolean {
    return this.next() < probability
  }

  pick<T> (items: readonly T[]): T {
    if (items.length === 0) throw new Error('nothing to pick from')
    return items[Math.floor(this.next() * items.length)]!
  }

  /** `items` in a random order (a new array). */
  shuffled<T> (items: readonly T[]): T[] {
    const result = [...items]
    for (let i = result.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1))
      ;[result[i], result[j]] = [result[j]!, result[i]!]
    }
    return result
  }
}
