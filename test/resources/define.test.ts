import { Type, type TObject } from '@sinclair/typebox'
import t from 'tap'
import { belongsTo, defineResource, DefinitionError, ENGINE_COLLECTIONS, hasMany, LIST_PARAMETERS, where, type NamedFilter } from '../../src/resources/define.js'
import { buildModel } from '../../src/resources/model.js'
import { body, buildTestApp, post } from '../helper.js'

const named = { name: Type.String() }

t.test('a definition is checked on its own', async t => {
  t.throws(() => defineResource({ collection: 'Bad Name', fields: Type.Object(named) }), DefinitionError)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ name: Type.Integer() }) }), /"name" as a string/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ name: Type.Optional(Type.String()) }) }), /field "name" must be required, or have a default: every resource has a name/)
  t.doesNotThrow(() => defineResource({ collection: 'things', fields: Type.Object({ name: Type.Optional(Type.String({ default: 'untitled' })) }) }), 'a default fills it in')
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, id: Type.Integer() }) }), /reserved/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object(named), sortable: ['nope' as 'name'] }), /sortable names "nope"/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object(named), owner: 'name' }), /read-only/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object(named), relations: { x: belongsTo('others', { foreignKey: 'otherId' }) } }), /not a field/)
  // Tables and columns are named after collections and fields, and PostgreSQL cuts names past 63 bytes.
  const long = 'a'.repeat(64)
  t.throws(() => defineResource({ collection: long, fields: Type.Object(named) }), /collection "a+" is 64 characters long; a database name holds at most 63/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, [long]: Type.String() }) }), /field "a+" is 64 characters long/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object(named), owner: long }), /owner field "a+" is 64 characters long/)
  t.doesNotThrow(() => defineResource({ collection: long.slice(1), fields: Type.Object({ ...named, [long.slice(1)]: Type.String() }), owner: `b${long.slice(2)}` }), '63 characters are enough')
  // A column holds a value or nothing: a null would come back absent, or fail a required field's NOT NULL (a 500).
  for (const [label, schema] of [
    ['a union with null', Type.Optional(Type.Union([Type.String(), Type.Null()]))],
    ['a required one', Type.Union([Type.Integer(), Type.Null()])],
    ['Type.Null', Type.Optional(Type.Null())],
    ['an enum with null', Type.Optional(Type.Unsafe({ enum: ['a', null] }))],
    ['OpenAPI 3.0 nullable', Type.Optional(Type.Unsafe({ type: 'string', nullable: true }))],
    ['a type list', Type.Optional(Type.Unsafe({ type: ['string', 'null'] }))],
    ['Type.Unknown', Type.Unknown()],
    ['Type.Any', Type.Optional(Type.Any())]
  ] as const) {
    t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, maybe: schema }) }), /field "maybe" allows null, .* declare it Type.Optional\(…\) of the types it takes, without null/, label)
  }
  t.doesNotThrow(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, box: Type.Optional(Type.Object({ lid: Type.Union([Type.String(), Type.Null()]) })) }) }),
    'a null inside an object field is kept as sent')
  const ok = defineResource({ collection: 'boxes', fields: Type.Object(named) })
  t.equal(ok.singular, 'boxe', 'default singular strips one s; set singular when English disagrees')
  t.ok(Object.isFrozen(ok))
})

t.test('relations are checked against the other definitions', async t => {
  const parent = defineResource({ collection: 'parents', fields: Type.Object(named), relations: { kids: hasMany('kids', { foreignKey: 'parentId' }) } })
  t.throws(() => buildModel([parent]), /unknown collection "kids"/)
  const kidWithoutKey = defineResource({ collection: 'kids', fields: Type.Object({ ...named, parentId: Type.Integer() }) })
  t.throws(() => buildModel([parent, kidWithoutKey]), /needs kids to declare belongsTo/)
  const kid = defineResource({ collection: 'kids', fields: Type.Object({ ...named, parentId: Type.String() }), relations: { parent: belongsTo('parents', { foreignKey: 'parentId' }) } })
  t.throws(() => buildModel([parent, kid]), /integer field "parentId"/)
  t.throws(() => buildModel([parent, parent]), /defined twice/)
})

t.test('only scalar fields can be filtered or sorted by: an object or array is stored as JSON text', async t => {
  const fields = Type.Object({ ...named, tags: Type.Optional(Type.Array(Type.String())), mixed: Type.Optional(Type.Union([Type.Literal(1), Type.Literal('one')])) })
  t.throws(() => buildModel([defineResource({ collection: 'things', fields, filterable: ['tags'] })]), /filterable field "tags" must be a string, number, integer, boolean, or a union of string or number literals: any other value/)
  t.throws(() => buildModel([defineResource({ collection: 'things', fields, sortable: ['tags'] })]), /sortable field "tags" must be a string, number, integer, boolean, or a union of string or number literals/)
  t.throws(() => buildModel([defineResource({ collection: 'things', fields, filterable: ['mixed'] })]), /filterable field "mixed" .* \(an object, an array, a union of mixed types\) is stored as JSON text/)
})

t.test('a union of number literals is a column of numbers: integers when all are, else numbers', async t => {
  const fields = Type.Object({ ...named, level: Type.Union([Type.Literal(1), Type.Literal(5), Type.Literal(10)], { default: 5 }), ratio: Type.Optional(Type.Union([Type.Literal(0.5), Type.Literal(2)])) })
  const things = buildModel([defineResource({ collection: 'things', fields, filterable: ['level', 'ratio'], sortable: ['level', 'ratio'] })]).get('things')
  t.same(JSON.parse(JSON.stringify(things.fields.get('level')!.schema)), { type: 'integer', enum: [1, 5, 10], default: 5 })
  t.equal(things.fields.get('level')!.kind, 'integer')
  t.same(JSON.parse(JSON.stringify(things.fields.get('ratio')!.schema)), { type: 'number', enum: [0.5, 2] })
  t.equal(things.fields.get('ratio')!.kind, 'number')
})

t.test('nothing may show a write-only value, or let a caller test a guess of it', async t => {
  const secret = Type.String({ writeOnly: true })
  const things = (options: Partial<Parameters<typeof defineResource>[0]>) => () => defineResource({ collection: 'things', fields: Type.Object({ ...named, pin: secret }), ...options })
  t.throws(things({ unique: ['pin'] }), /write-only field "pin" cannot be unique: a 409 would tell a caller that some record holds the value they sent/)
  t.throws(things({ filterable: ['pin'] }), /write-only field "pin" cannot be filterable/)
  t.throws(things({ sortable: ['pin'] }), /write-only field "pin" cannot be sortable/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ name: Type.String({ writeOnly: true }) }) }), /field "name" cannot be write-only/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, ownerId: Type.Integer({ writeOnly: true }) }), relations: { owner: belongsTo('owners', { foreignKey: 'ownerId' }) } }),
    /write-only field "ownerId" cannot be the foreign key of relation "owner": its link shows the value/)
  for (const [label, schema] of [
    ['a member', Type.Object({ user: Type.String(), password: secret })],
    ['an item', Type.Array(secret)],
    ['a variant\'s member', Type.Union([Type.Object({ kind: Type.Literal('a'), token: secret }), Type.Object({ kind: Type.Literal('b') })])]
  ] as const) {
    t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, login: Type.Optional(schema) }) }),
      /field "login" marks a value inside it write-only, but only a whole field is left out of representations/, label)
  }
  t.doesNotThrow(things({ filterable: ['name'], sortable: ['name'], unique: ['name'], filters: { set: [where('pin', 'ne', '')] } }), 'a named filter of the definition\'s own may test it')
})

t.test('a field declares only what JSON carries, and is never marked readOnly', async t => {
  for (const [label, schema, type] of [
    ['Type.Date', Type.Date(), 'Date'],
    ['Type.Uint8Array', Type.Uint8Array(), 'Uint8Array'],
    ['Type.BigInt', Type.BigInt(), 'bigint'],
    ['Type.Undefined', Type.Undefined(), 'undefined'],
    ['a Date inside an object', Type.Object({ at: Type.Date() }), 'Date'],
    ['a RegExp among array items', Type.Array(Type.RegExp(/a+/)), 'RegExp']
  ] as const) {
    // Before, Fastify refused to build the serializer, with a message about GET /health.
    t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, due: Type.Optional(schema) }) }),
      new RegExp(`field "due" declares type "${type}", which JSON cannot carry: .* Type.String\\(\\{ format: 'date-time' \\}\\)`), label)
  }
  for (const [label, schema] of [['itself', Type.String({ readOnly: true })], ['a member', Type.Object({ code: Type.String({ readOnly: true }) })]] as const) {
    // Ajv ignores the mark, so clients could write what the document tells them they cannot.
    t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, code: Type.Optional(schema) }) }),
      /field "code" is marked readOnly, but the fields are what clients write, and nothing else would set it/, label)
  }
  // Before, start-up stopped with Fastify's "There is already another schema with id "T0"".
  const Tree = Type.Recursive(This => Type.Object({ kids: Type.Array(This) }))
  for (const [label, schema] of [['Type.Recursive', Tree], ['a Type.Ref inside an array', Type.Array(Type.Ref('Tree'))]] as const) {
    t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, tree: Type.Optional(schema) }) }),
      /field "tree" refers to a schema by \$id or \$ref \(Type.Recursive, Type.Ref\), .* write the field's schema out in full/, label)
  }
  const both = Type.Intersect([Type.Object({ a: Type.Integer() }), Type.Object({ b: Type.Integer() })])
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, both }) }),
    /field "both" is an intersection of objects \(Type.Intersect\), which cannot refuse members it does not declare, .* Type.Composite/)
  t.doesNotThrow(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, code: Type.Intersect([Type.String({ minLength: 2 }), Type.String({ maxLength: 4 })]) }) }), 'an intersection of strings is only their bounds')
})

t.test('a filterable field may not take a list parameter\'s name', async t => {
  // A filterable `sort` field made `sort=-order` a filter on it: every sorted list came back empty.
  for (const name of ['page', 'limit', 'sort', 'filter', 'fields', 'cursor']) {
    t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, [name]: Type.Optional(Type.String()) }), filterable: [name as 'name'] }),
      new RegExp(`filterable field "${name}" would take the list's own "${name}" parameter`), name)
    t.doesNotThrow(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, [name]: Type.Optional(Type.String()) }), sortable: [name as 'name'] }), `${name} may still be a field, and sortable`)
  }
  // LIST_PARAMETERS and the list's query schema (query-schema.ts) are written apart: they must name the same parameters.
  const document = body(await (await buildTestApp(t)).inject({ method: 'GET', url: '/openapi.json' }))
  const filterable = ['active', 'name', 'budget']
  const listed = (document.paths['/v1/projects'].get.parameters as Array<{ name: string, in: string }>)
    .filter(parameter => parameter.in === 'query' && !parameter.name.includes('[') && !filterable.includes(parameter.name)).map(parameter => parameter.name)
  t.same(listed.sort(), [...LIST_PARAMETERS].sort(), 'every list parameter is guarded, and nothing else')
})

t.test('a collection or schema name the engine or another resource already has is refused, saying which', async t => {
  // The list of the engine's own collections is the engine's own /v1 paths, no more and no fewer.
  const paths = Object.keys(body(await (await buildTestApp(t, { definitions: [] })).inject({ method: 'GET', url: '/openapi.json' })).paths as object)
  t.same([...new Set(paths.filter(path => path.startsWith('/v1/')).map(path => path.split('/')[2]))].sort(), [...ENGINE_COLLECTIONS].sort(), 'ENGINE_COLLECTIONS names every path the engine serves under /v1')
  for (const collection of ['api-keys', 'clients', 'webhooks', 'auth']) {
    t.throws(() => defineResource({ collection, fields: Type.Object(named) }), new RegExp(`/v1/${collection} is the engine's own; name the collection otherwise`))
  }
  // These used to stop start-up with Fastify's "Schema with id 'Problem' already declared!", naming no resource.
  const problems = defineResource({ collection: 'problems', fields: Type.Object(named) })
  await t.rejects(buildTestApp(t, { definitions: [problems] }), /resource "problems": its schema "Problem" is the engine's own too; give the resource another singular/)
  const crates = [defineResource({ collection: 'crate', fields: Type.Object(named) }), defineResource({ collection: 'crates', fields: Type.Object(named) })]
  await t.rejects(buildTestApp(t, { definitions: crates }), /resource "crates": its schema "Crate" is resource "crate"'s too/)
  const renamed = defineResource({ collection: 'problems', singular: 'issue', fields: Type.Object(named) })
  t.equal((await (await buildTestApp(t, { definitions: [renamed] })).inject({ method: 'GET', url: '/v1/problems' })).statusCode, 200, 'a singular of its own mends it')
})

t.test('field names that differ only in case are refused: SQLite would take them for one column', async t => {
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, dueDate: Type.Optional(Type.String()), duedate: Type.Optional(Type.String()) }) }),
    /field "duedate" differs from "dueDate" only in case, and SQLite does not tell column names apart by case/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, createdat: Type.Optional(Type.String()) }) }), /field "createdat" differs from "createdAt" only in case/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, ownedby: Type.Optional(Type.String()) }), owner: 'ownedBy' }), /field "ownedby" differs from "ownedBy" only in case/)
})

t.test('the singular names schemas and operations, so it must make an identifier', async t => {
  for (const singular of ['x y', '', 'a/b', 'Thing']) {
    // These stopped start-up with Fastify's errors about a schema $id ("must match format uri-reference").
    t.throws(() => defineResource({ collection: 'things', singular, fields: Type.Object(named) }), new RegExp(`singular "${singular}" must be letters, digits and dashes, starting with a lower-case letter`), JSON.stringify(singular))
  }
  t.throws(() => defineResource({ collection: 's', fields: Type.Object(named) }), /singular "" must be .* \(it is the collection without its last "s"\): set singular/)
  t.equal(defineResource({ collection: 'line-items', fields: Type.Object(named) }).singular, 'line-item')
})

t.test('a named filter compares a field only with values it can hold', async t => {
  // Such a value compared differently on each database: 'yes' for a boolean matched nothing on SQLite and every true row on PostgreSQL.
  const fields = Type.Object({ ...named, active: Type.Boolean({ default: true }), level: Type.Integer({ default: 1 }), kind: Type.Union([Type.Literal('a'), Type.Literal('b')], { default: 'a' }) })
  const model = (filter: NamedFilter) => () => buildModel([defineResource({ collection: 'things', fields, filters: { chosen: filter } })])
  t.throws(model([where('active', 'eq', 'yes')]), /filter "chosen" compares "active" with "yes", but it holds a boolean/)
  t.throws(model([where('level', 'in', [1, '2'])]), /compares "level" with "2", but it holds an integer/)
  t.throws(model([where('kind', 'ne', 'c')]), /compares "kind" with "c", but it holds one of "a", "b"/)
  t.throws(model([where('level', 'eq', null)]), /compares "level" with null, which no row holds: a record without a value is matched only by ne/)
  t.throws(model([where('level', 'in', [])]), /compares "level" by in, which takes a non-empty array/)
  t.throws(model([where('name', 'like', 3)]), /compares "name" by like, which takes a string/)
  t.throws(model([where('id', 'gt', '7')]), /compares "id" with "7", but it holds an integer id/)
  t.throws(model(({ today }) => [where('level', 'lt', today)]), /compares "level" with "1970-01-01"/, 'a filter computed per request is checked with sample values')
  t.doesNotThrow(model([where('level', 'in', [1, 2]), where('kind', 'eq', 'b'), where('active', 'ne', false)]))
  t.doesNotThrow(model(({ now }) => [where('createdAt', 'lt', now.toISOString())]))
})

t.test('no name a JavaScript object already answers to: it would read as present where it is left out', async t => {
  // Before, a create without the field `constructor` was a 400 (`must be string, not function`), and fields=toString showed the function's source.
  for (const field of ['constructor', 'toString', 'valueOf', 'hasOwnProperty']) {
    t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, [field]: Type.Optional(Type.String()) }) }),
      new RegExp(`field "${field}" is a name every JavaScript object already has \\(Object.prototype.${field}\\)`))
  }
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, meta: Type.Optional(Type.Array(Type.Object({ toString: Type.Optional(Type.String()) }))) }) }),
    /field "meta" has a member "toString", a name every JavaScript object already has/, 'inside an object field too: {meta: [{}]} was a 400')
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object(named), owner: 'valueOf' }), /owner field "valueOf" is a name every JavaScript object already has/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object(named), filters: { toString: [where('name', 'eq', 'x')] } }), /filter name "toString" is a name every JavaScript object already has/)
  t.throws(() => defineResource({ collection: 'things', fields: Type.Object(named), relations: { constructor: hasMany('others', { foreignKey: 'thingId' }) } }), /relation name "constructor" is a name every JavaScript object already has/)
})

t.test('a field the validator cannot compile is refused naming it; annotations for other tools are kept', async t => {
  const things = (options: Record<string, unknown>) => [defineResource({ collection: 'things', fields: Type.Object({ ...named, code: Type.Optional(Type.String(options)) }) })]
  // Each stopped the start in Fastify's words, naming a route (for the pattern, GET /health) but neither resource nor field.
  await t.rejects(buildTestApp(t, { definitions: things({ minlength: 2 }) }), /resource "things": field "code" uses the keyword "minlength", which JSON Schema does not have \(a typo\? an annotation for other tools is named x-…\)/)
  await t.rejects(buildTestApp(t, { definitions: things({ format: 'phone' }) }), /resource "things": field "code" uses the format "phone", which the validator does not know/)
  await t.rejects(buildTestApp(t, { definitions: things({ pattern: '([' }) }), /resource "things": field "code" is not a schema the validator can compile: Invalid regular expression/)

  // Vendor extensions and OpenAPI's `example` were refused by Ajv's strict mode too.
  const app = await buildTestApp(t, { definitions: things({ 'x-order': 2, example: 'AB-1', pattern: '^[A-Z]+-[0-9]+$' }) })
  t.equal((await app.inject({ method: 'POST', url: '/v1/things', payload: { name: 'a', code: 'AB-1' } })).statusCode, 201)
  t.equal((await app.inject({ method: 'POST', url: '/v1/things', payload: { name: 'a', code: 'ab' } })).statusCode, 400, 'the pattern still applies')
  t.match(body(await app.inject({ method: 'GET', url: '/openapi.json' })).components.schemas.Thing.properties.code, { 'x-order': 2, example: 'AB-1' }, 'and the document carries them')
})

t.test('bounds no value can meet are refused: every value sent would be', async t => {
  for (const [label, schema, reason] of [
    ['lengths', Type.String({ minLength: 5, maxLength: 2 }), 'minLength 5 > maxLength 2'],
    ['numbers', Type.Number({ minimum: 10, maximum: 1 }), 'minimum 10 > maximum 1'],
    ['an open interval', Type.Number({ exclusiveMinimum: 1, maximum: 1 }), 'its bounds leave no number between them'],
    ['items inside an object', Type.Object({ tags: Type.Array(Type.String(), { minItems: 3, maxItems: 1 }) }), 'minItems 3 > maxItems 1']
  ] as const) {
    t.throws(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, code: Type.Optional(schema) }) }),
      new RegExp(`field "code" can hold no value \\(${reason}\\), so every value sent for it would be refused`), label)
  }
  t.doesNotThrow(() => defineResource({ collection: 'things', fields: Type.Object({ ...named, code: Type.String({ minLength: 2, maxLength: 2 }), n: Type.Number({ minimum: 1, maximum: 1 }) }) }), 'one value is enough')
})

t.test('defaults and the example are held to the validator requests meet, formats and closed objects included', async t => {
  const things = (fields: TObject, example?: Record<string, unknown>) => [defineResource({ collection: 'things', fields: Type.Object({ ...named, ...fields.properties }), ...(example === undefined ? {} : { example: example as never }) })]
  // A default the field refuses would answer every create that leaves the field out with a 400 about a value the client never sent.
  for (const [label, fields, message] of [
    ['a bound', Type.Object({ size: Type.Integer({ minimum: 1, default: 0 }) }), 'the default of field "size" is refused by its own schema: /size must be >= 1'],
    // TypeBox, which checked before, knows no formats: every create without `at` was a 400.
    ['a format', Type.Object({ at: Type.String({ format: 'date-time', default: 'now' }) }), 'the default of field "at" is refused by its own schema: /at must be an RFC 3339 date-time'],
    ['a closed object', Type.Object({ box: Type.Object({ lid: Type.String() }, { default: { lid: 'tin', hinge: 1 } }) }), 'the default of field "box" is refused by its own schema: /box/hinge is not a known property']
  ] as const) {
    await t.rejects(buildTestApp(t, { definitions: things(fields) }), { message: new RegExp(`^resource "things": ${message.replace(/[/()]/g, '\\$&')}`) }, label)
  }
  // The documentation would show a body that fails.
  const boxed = Type.Object({ size: Type.Optional(Type.Integer()), at: Type.Optional(Type.String({ format: 'date' })), box: Type.Optional(Type.Object({ lid: Type.String() })) })
  for (const [example, message] of [
    [{ name: 'x', size: 'big' }, '/size must be integer, not string'],
    [{ name: 'x', at: 'yesterday' }, '/at must be a calendar date written YYYY-MM-DD'],
    [{ name: 'x', colour: 'red' }, '/colour is not a known property'],
    [{ name: 'x', box: { lid: 'tin', hinge: 1 } }, '/box/hinge is not a known property'],
    [{ size: 1 }, '/name is required']
  ] as const) {
    await t.rejects(buildTestApp(t, { definitions: things(boxed, example) }), { message: new RegExp(`the example is not a valid create body: ${message}`) }, JSON.stringify(example))
  }
  const app = await buildTestApp(t, { definitions: things(Type.Object({ size: Type.Integer({ default: 1 }), at: Type.Optional(Type.String({ format: 'date-time' })) }), { name: 'x', at: '2026-01-01T00:00:00Z' }) })
  t.equal((await app.inject({ method: 'GET', url: '/v1/things' })).statusCode, 200, 'an example may leave defaulted fields out')
})

t.test('a named filter\'s equality with a value its field refuses stops the start; an order comparison and a filter computed per request do not', async t => {
  const fields = Type.Object({ ...named, size: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })), code: Type.Optional(Type.String({ pattern: '^[A-Z]+$' })), day: Type.Optional(Type.String({ format: 'date', pattern: '^2' })) })
  const things = (filters: Record<string, NamedFilter>) => [defineResource({ collection: 'things', fields, filters })]
  // Each would match no record (by ne, every record), and a client's own equality with that value is a 400.
  for (const [filters, message] of [
    [{ huge: [where('size', 'eq', 9)] }, 'filter "huge" compares "size" by eq with 9, a value the field refuses, so no record has it: /size must be <= 5'],
    [{ sized: [where('size', 'ne', 0)] }, 'filter "sized" compares "size" by ne with 0, a value the field refuses, so no record has it: /size must be >= 1'],
    [{ few: [where('size', 'in', [2, 6])] }, 'filter "few" compares "size" by in with 6, a value the field refuses, so no record has it: /size must be <= 5'],
    [{ lower: [where('code', 'eq', 'abc')] }, 'filter "lower" compares "code" by eq with "abc", a value the field refuses, so no record has it: /code must match pattern']
  ] as const) {
    await t.rejects(buildTestApp(t, { definitions: things(filters) }), { message: `resource "things": ${message}`.replace(/pattern$/, 'pattern "^[A-Z]+$"') }, message)
  }
  const app = await buildTestApp(t, {
    definitions: things({
      small: [where('size', 'lt', 10), where('size', 'gte', 0)],
      // Checked by type on a sample whose today is 1970-01-01, which this field's pattern refuses: a real today passes.
      today: ({ today }) => [where('day', 'eq', today)]
    })
  })
  const due = body(await post(app, '/v1/things', { name: 'due', size: 3, day: new Date().toISOString().slice(0, 10) }))
  const later = body(await post(app, '/v1/things', { name: 'later', size: 5, day: '2999-01-01' }))
  t.same(body(await app.inject({ method: 'GET', url: '/v1/things?filter=small' })).map((item: { id: number }) => item.id), [due.id, later.id])
  t.same(body(await app.inject({ method: 'GET', url: '/v1/things?filter=today' })).map((item: { id: number }) => item.id), [due.id])
})
