// A seeded random run of two callers and an admin on owned boards and their owned cards: creates
// (flat and nested), reads, patches, moves of a card to another board, deletes that cascade, the
// related list and counts. A model of who sees what predicts every status and every list: a caller
// sees only their own, an admin everything, and a board the caller cannot see is a missing one.
// SEED=… STEPS=… replay or widen it.
import { Type } from '@sinclair/typebox'
import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { belongsTo, defineResource, hasMany } from '../../src/resources/define.js'
import { bearer, body, buildTestApp, type Json } from '../helper.js'
import { Random } from '../support/random.js'

const SEED = Number(process.env.SEED ?? 20261125)
const STEPS = Number(process.env.STEPS ?? 1000)

const boards = defineResource({
  collection: 'boards',
  fields: Type.Object({ name: Type.String(), rank: Type.Optional(Type.Integer()) }),
  owner: 'owner',
  unique: ['name'],
  relations: { cards: hasMany('cards', { foreignKey: 'boardId', onDelete: 'cascade' }) },
  filterable: ['rank']
})
const cards = defineResource({
  collection: 'cards',
  fields: Type.Object({ name: Type.String(), boardId: Type.Integer({ minimum: 1 }) }),
  owner: 'owner',
  relations: { board: belongsTo('boards', { foreignKey: 'boardId' }) }
})

const SCOPES = 'boards:read boards:write cards:read cards:write'
const CALLERS = { alice: bearer({ sub: 'alice', scope: SCOPES }), bob: bearer({ sub: 'bob', scope: SCOPES }), root: bearer({ sub: 'root', scope: 'admin' }) }
type Caller = keyof typeof CALLERS

class Run {
  readonly random = new Random(SEED)
  readonly boards = new Map<number, Json>()
  readonly cards = new Map<number, Json>()
  caller: Caller = 'alice'
  step = 0

  constructor (readonly t: Test, readonly app: FastifyInstance) {}

  sees (record: Json | undefined): record is Json {
    return record !== undefined && (this.caller === 'root' || record.owner === this.caller)
  }

  async send (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Json): Promise<LightMyRequestResponse> {
    return await this.app.inject({ method, url, headers: { authorization: CALLERS[this.caller] }, ...(payload === undefined ? {} : { payload }) })
  }

  expect (response: LightMyRequestResponse, status: number, what: string): boolean {
    return this.t.equal(response.statusCode, status, `seed ${SEED} step ${this.step}, ${this.caller}: ${what}: ${response.body.slice(0, 300)}`)
  }

  anyBoardId (): number {
    return this.random.pick([...this.boards.keys(), 999999])
  }

  async createBoard (): Promise<boolean> {
    const payload = { name: this.random.pick(['todo', 'doing', 'done', 'later']), rank: this.random.pick([1, 2, 3]) }
    const response = await this.send('POST', '/v1/boards', payload)
    // Unique per owner: another caller's board of the same name is no clash.
    const clash = [...this.boards.values()].some(board => board.name === payload.name && board.owner === this.caller)
    if (!this.expect(response, clash ? 409 : 201, `POST board ${payload.name}`)) return false
    if (response.statusCode === 201) this.boards.set(body(response).id, body(response))
    return true
  }

  async createCard (nested: boolean): Promise<boolean> {
    const boardId = this.anyBoardId()
    const response = nested
      ? await this.send('POST', `/v1/boards/${boardId}/cards`, { name: 'card' })
      : await this.send('POST', '/v1/cards', { name: 'card', boardId })
    // A hidden board is a missing one: 404 as the path's parent, 400 as a body's foreign key.
    const status = this.sees(this.boards.get(boardId)) ? 201 : nested ? 404 : 400
    if (!this.expect(response, status, `POST card on board ${boardId}${nested ? ' (nested)' : ''}`)) return false
    if (response.statusCode === 201) this.cards.set(body(response).id, body(response))
    return true
  }

  async touchBoard (): Promise<boolean> {
    const board = this.random.pick([...this.boards.values()])
    const method = this.random.pick(['GET', 'PATCH', 'DELETE'] as const)
    const response = await this.send(method, `/v1/boards/${board.id}`, method === 'PATCH' ? { rank: this.random.pick([1, 2, 3]) } : undefined)
    const visible = this.sees(board)
    if (!this.expect(response, visible ? (method === 'DELETE' ? 204 : 200) : 404, `${method} ${board.owner}'s board ${board.id}`)) return false
    if (visible && method === 'PATCH') this.boards.set(board.id, body(response))
    if (visible && method === 'DELETE') {
      this.boards.delete(board.id)
      for (const [id, card] of this.cards) if (card.boardId === board.id) this.cards.delete(id)
    }
    return true
  }

  async moveCard (): Promise<boolean> {
    const card = this.random.pick([...this.cards.values()])
    const boardId = this.anyBoardId()
    const response = await this.send('PATCH', `/v1/cards/${card.id}`, { boardId })
    // The body is judged before the record is looked up, so a hidden target board is a 400 even on a hidden card.
    const status = !this.sees(this.boards.get(boardId)) ? 400 : this.sees(card) ? 200 : 404
    if (!this.expect(response, status, `move ${card.owner}'s card ${card.id} to board ${boardId}`)) return false
    if (response.statusCode === 200) this.cards.set(card.id, body(response))
    return true
  }

  async listRelated (): Promise<boolean> {
    const boardId = this.anyBoardId()
    const response = await this.send('GET', `/v1/boards/${boardId}/cards?limit=100`)
    if (!this.sees(this.boards.get(boardId))) return this.expect(response, 404, `cards of board ${boardId}`)
    const expected = [...this.cards.values()].filter(card => card.boardId === boardId && this.sees(card)).map(card => card.id as number)
    return this.expect(response, 200, `cards of board ${boardId}`) &&
      this.t.same((body(response) as unknown as Json[]).map(card => card.id as number), expected.sort((a, b) => a - b), `step ${this.step}: cards of board ${boardId}`) &&
      this.t.equal(response.headers['x-total-count'], String(expected.length))
  }

  async count (): Promise<boolean> {
    const visible = [...this.boards.values()].filter(board => this.sees(board))
    const all = await this.send('GET', '/v1/boards?limit=100&cursor=')
    const ranked = await this.send('GET', '/v1/boards?rank=2')
    return this.t.same((body(all) as unknown as Json[]).map(board => board.id as number), visible.map(board => board.id as number).sort((a, b) => a - b), `step ${this.step}: ${this.caller}'s boards by cursor`) &&
      this.t.equal(ranked.headers['x-total-count'], String(visible.filter(board => board.rank === 2).length), `step ${this.step}: ${this.caller}'s count of rank 2`)
  }

  async next (): Promise<boolean> {
    this.caller = this.random.pick(['alice', 'bob', 'alice', 'bob', 'root'])
    const choices = ['board', 'card', 'nested', 'related', 'count', ...(this.boards.size > 0 ? ['board-op'] : []), ...(this.cards.size > 0 ? ['move'] : [])]
    switch (this.random.pick(choices)) {
      case 'board': return await this.createBoard()
      case 'card': return await this.createCard(false)
      case 'nested': return await this.createCard(true)
      case 'board-op': return await this.touchBoard()
      case 'move': return await this.moveCard()
      case 'related': return await this.listRelated()
      default: return await this.count()
    }
  }
}

t.test('a random run of owners and an admin keeps to a model of who sees what', async t => {
  const run = new Run(t, await buildTestApp(t, { definitions: [boards, cards] }))
  // Stops at the first disagreement: every later answer would differ from the model too.
  for (; run.step < STEPS; run.step++) if (!await run.next()) break
  t.equal(run.step, STEPS, 'every step agreed with the model')
  t.ok(run.cards.size >= 5, `${run.boards.size} boards and ${run.cards.size} cards at the end`)
})
