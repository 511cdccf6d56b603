// A seeded random run of creates, replacements, merge patches, deletes, reads, filtered lists and
// sorted walks by page and by cursor, on a resource with a field of every kind. A plain in-memory
// model of the contract predicts each answer: the stored values (defaults, merge patch, date-times
// in UTC), ETags that move on every write, filters, sort order and counts. No answer may be a 5xx.
// Replay or explore with SEED=… STEPS=… (the failure message names the seed and the step).
import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { body, buildTestApp, type Json } from '../helper.js'
import { Random } from '../support/random.js'
import { mergePatch, passes, sortedIds, writableOf, type SortKey } from '../support/record-model.js'
import { FILTERS, randomWidgetBody, SORT_KEYS, WIDGET_DEFAULTS, WIDGET_FIELDS, widgets } from '../support/widgets.js'

const SEED = Number(process.env.SEED ?? 20261125)
const STEPS = Number(process.env.STEPS ?? 1200)

/** A date-time as the service stores it; other values as they are. */
const storedValue = (field: string, value: unknown): unknown => field === 'when' && typeof value === 'string' ? new Date(value).toISOString() : value

/** What a write of these writable values stores: defaults where nothing is sent, date-times in UTC. */
function expectedFields (values: Json): Json {
  const result: Json = { ...WIDGET_DEFAULTS }
  for (const field of WIDGET_FIELDS) if (values[field] !== undefined && values[field] !== null) result[field] = storedValue(field, values[field])
  return result
}

class Run {
  readonly random = new Random(SEED)
  readonly records = new Map<number, Json>()
  readonly etags = new Map<number, string>()
  step = 0

  constructor (readonly t: Test, readonly app: FastifyInstance) {}

  get ids (): number[] { return [...this.records.keys()] }

  where (what: string): string { return `seed ${SEED} step ${this.step}: ${what}` }

  /**
   * True for a 2xx. A random body may be refused (4xx, as a problem), but
   * never with a 5xx, nor with a 404: every widget the model holds exists.
   */
  succeeded (response: LightMyRequestResponse, what: string): boolean {
    if (response.statusCode >= 500 || response.statusCode === 404) this.t.fail(this.where(`${what} → ${response.statusCode} ${response.body}`))
    if (response.statusCode >= 400) this.t.match(response.headers['content-type'], /^application\/problem\+json/, this.where(what))
    return response.statusCode < 300
  }

  /** A read the model says must succeed. */
  answered (response: LightMyRequestResponse, what: string): boolean {
    return this.t.equal(response.statusCode, 200, this.where(`${what}: ${response.body.slice(0, 500)}`))
  }

  /** Records a write's answer; the ETag must be new. */
  recordWritten (response: LightMyRequestResponse, expected: Json, what: string): boolean {
    const record = body(response)
    const same = this.t.same(writableOf(record, WIDGET_FIELDS), expected, this.where(what))
    const etag = String(response.headers.etag)
    if (this.etags.get(record.id) === etag) this.t.fail(this.where(`${what} kept the ETag ${etag}`))
    this.records.set(record.id, record)
    this.etags.set(record.id, etag)
    return same
  }

  async create (): Promise<boolean> {
    const payload = randomWidgetBody(this.random, 'whole', this.ids)
    const response = await this.app.inject({ method: 'POST', url: '/v1/widgets', payload })
    return !this.succeeded(response, `POST ${JSON.stringify(payload)}`) || this.recordWritten(response, expectedFields(payload), `POST ${JSON.stringify(payload)}`)
  }

  async replace (id: number): Promise<boolean> {
    const payload = randomWidgetBody(this.random, 'whole', this.ids)
    const response = await this.app.inject({ method: 'PUT', url: `/v1/widgets/${id}`, payload })
    return !this.succeeded(response, `PUT ${JSON.stringify(payload)}`) || this.recordWritten(response, expectedFields(payload), `PUT ${JSON.stringify(payload)}`)
  }

  async patch (id: number): Promise<boolean> {
    const payload = randomWidgetBody(this.random, 'patch', this.ids)
    const response = await this.app.inject({ method: 'PATCH', url: `/v1/widgets/${id}`, payload, headers: { 'content-type': 'application/merge-patch+json' } })
    const before = writableOf(this.records.get(id)!, WIDGET_FIELDS)
    const what = `PATCH ${JSON.stringify(before)} with ${JSON.stringify(payload)}`
    return !this.succeeded(response, what) || this.recordWritten(response, expectedFields(mergePatch(before, writableOf(payload, WIDGET_FIELDS)) as Json), what)
  }

  async remove (id: number): Promise<boolean> {
    const response = await this.app.inject({ method: 'DELETE', url: `/v1/widgets/${id}` })
    // Every widget the model holds exists, and its children cascade: nothing may refuse the delete.
    if (!this.t.equal(response.statusCode, 204, this.where(`DELETE ${id}: ${response.body}`))) return false
    this.records.delete(id)
    // The children relation cascades, down every level.
    for (let orphaned = true; orphaned;) {
      orphaned = false
      for (const [other, record] of this.records) {
        if (record.parentId !== undefined && !this.records.has(record.parentId)) {
          this.records.delete(other)
          orphaned = true
        }
      }
    }
    return this.t.equal((await this.app.inject({ method: 'GET', url: `/v1/widgets/${id}` })).statusCode, 404, this.where(`GET after DELETE ${id}`))
  }

  async read (id: number): Promise<boolean> {
    const url = `/v1/widgets/${id}`
    const response = await this.app.inject({ method: 'GET', url })
    if (!this.answered(response, `GET ${id}`)) return false
    const etag = this.etags.get(id)!
    return this.t.same(writableOf(body(response), WIDGET_FIELDS), writableOf(this.records.get(id)!, WIDGET_FIELDS), this.where(`GET ${id}`)) &&
      this.t.equal(response.headers.etag, etag, this.where('the ETag of the last write')) &&
      this.t.equal((await this.app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } })).statusCode, 304, this.where('If-None-Match')) &&
      this.t.equal((await this.app.inject({ method: 'PATCH', url, payload: { name: 'lost' }, headers: { 'if-match': '"stale"' } })).statusCode, 412, this.where('If-Match'))
  }

  async filter (): Promise<boolean> {
    const field = this.random.pick(Object.keys(FILTERS))
    const { operators, samples } = FILTERS[field]!
    const op = this.random.pick(operators)
    const values = op === 'in' ? [this.random.pick(samples), this.random.pick(samples)] : [this.random.pick(samples)]
    const query = `${field}${op === 'eq' ? '' : `[${op}]`}=${encodeURIComponent(values.map(String).join(','))}&limit=100`
    const response = await this.app.inject({ method: 'GET', url: `/v1/widgets?${query}` })
    if (!this.answered(response, query)) return false
    const wanted = values.map(value => storedValue(field, value))
    const expected = [...this.records.values()].filter(record => passes(record[field], op, wanted)).map(record => record.id as number)
    const got = body(response) as unknown as Json[]
    // The default order is by id; a page holds the first 100.
    return this.t.same(got.map(item => item.id as number), expected.sort((a, b) => a - b).slice(0, 100), this.where(query)) &&
      this.t.equal(response.headers['x-total-count'], String(expected.length), this.where(`X-Total-Count of ${query}`))
  }

  /** Every page of a random sort, by page numbers or by cursor, following the `next` links. */
  async walk (): Promise<boolean> {
    const chosen: SortKey[] = SORT_KEYS.filter(() => this.random.chance(0.25)).map(key => [key, this.random.chance(0.5)])
    const keys = this.random.shuffled(chosen.length > 0 ? chosen : [['kind', false] as const])
    const sort = keys.map(([key, descending]) => `${descending ? '-' : ''}${key}`).join(',')
    const byCursor = this.random.chance(0.5)
    const limit = this.random.pick([3, 7, 20])
    const ids: number[] = []
    let url: string | undefined = `/v1/widgets?limit=${limit}&sort=${encodeURIComponent(sort)}${byCursor ? '&cursor=' : ''}`
    for (let pages = 0; url !== undefined && pages <= this.records.size; pages++) {
      const response: LightMyRequestResponse = await this.app.inject({ method: 'GET', url })
      if (!this.answered(response, url)) return false
      ids.push(...(body(response) as unknown as Json[]).map(item => item.id as number))
      if (!byCursor && !this.t.equal(response.headers['x-total-count'], String(this.records.size), this.where(`X-Total-Count of ${url}`))) return false
      url = /<([^>]+)>; rel="next"/.exec(String(response.headers.link ?? ''))?.[1]
    }
    return this.t.same(ids, sortedIds([...this.records.values()], keys), this.where(`sort=${sort} by ${byCursor ? 'cursor' : 'page'}, ${limit} a page`))
  }

  async next (): Promise<boolean> {
    const ids = this.ids
    if (ids.length === 0 || this.random.chance(0.25)) return await this.create()
    const id = this.random.pick(ids)
    if (this.random.chance(0.03)) return await this.remove(id)
    switch (this.random.pick(['put', 'patch', 'patch', 'read', 'filter', 'walk'])) {
      case 'put': return await this.replace(id)
      case 'patch': return await this.patch(id)
      case 'read': return await this.read(id)
      case 'filter': return await this.filter()
      default: return await this.walk()
    }
  }
}

t.test('a random run of writes and reads keeps to a model of the contract', async t => {
  const run = new Run(t, await buildTestApp(t, { definitions: [widgets] }))
  // Stops at the first disagreement: every later answer would differ from the model too.
  for (; run.step < STEPS; run.step++) if (!await run.next()) break
  t.equal(run.step, STEPS, 'every step agreed with the model')
  t.ok(run.records.size >= 20, `the collection grew to ${run.records.size} widgets, enough for pages and filters to mean something`)
})
