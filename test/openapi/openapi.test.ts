import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import AjvModule from 'ajv'
import formatsModule from 'ajv-formats'
import t from 'tap'
import { parse, stringify } from 'yaml'
import { resources } from '../../schemas/index.js'
import { documentHeaders } from '../../src/http/document-headers.js'
import { openapiDocument } from '../../src/openapi-document.js'
import { ADMIN, assertProblem, body, buildTestApp, createProject, type Json } from '../helper.js'
import { resolveHeader } from '../support/contract.js'
import { fromRoot } from '../support/paths.js'

t.test('openapi/openapi.json and openapi.yaml are what the definitions generate (run npm run openapi)', async t => {
  const generated = await openapiDocument(resources)
  for (const [name, text] of [['openapi.json', generated.json], ['openapi.yaml', generated.yaml]] as const) {
    const committed = await readFile(fromRoot(`openapi/${name}`), 'utf8').catch(() => '')
    t.ok(committed === text, `openapi/${name} is fresh`)
  }
  t.same(parse(generated.yaml), JSON.parse(generated.json), 'the YAML says the same as the JSON')
})

t.test('PUBLIC_URL is the document\'s server, a base that paths are appended to', async t => {
  t.same(body(await (await buildTestApp(t)).inject({ method: 'GET', url: '/openapi.json' })).servers, [{ url: '/' }], 'relative by default')
  const app = await buildTestApp(t, { env: { PUBLIC_URL: 'https://api.example.com/base/' } })
  t.same(body(await app.inject({ method: 'GET', url: '/openapi.json' })).servers, [{ url: 'https://api.example.com/base' }], 'without a trailing slash')
})

t.test('the document is made once and revalidated: public, no-cache, a weak ETag and 304; coded as asked; the UI\'s /docs/json and /docs/yaml alike', async t => {
  const app = await buildTestApp(t)
  const plain = await app.inject({ method: 'GET', url: '/openapi.json', headers: { authorization: undefined } })
  t.equal(plain.statusCode, 200)
  t.equal(plain.headers['cache-control'], 'public, no-cache', 'the same for every caller, checked again on each use')
  t.match(plain.headers.etag, /^W\/"[\w-]+"$/)
  t.match(plain.headers.vary, /Accept-Encoding/)
  t.match(plain.headers['content-type'], /^application\/json/)
  const document = JSON.parse(plain.body) as Json
  t.equal(document.openapi, '3.1.0')

  const again = await app.inject({ method: 'GET', url: '/openapi.json', headers: { 'if-none-match': plain.headers.etag as string } })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
  t.equal(again.headers.etag, plain.headers.etag)
  t.equal(again.headers['cache-control'], 'public, no-cache')
  const head = await app.inject({ method: 'HEAD', url: '/openapi.json' })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')

  // Its tag is weak and If-Match compares strongly: only `*` holds, even the document's own tag fails (RFC 9110 §13.1.1).
  t.equal((await app.inject({ method: 'GET', url: '/openapi.json', headers: { 'if-match': '*' } })).statusCode, 200)
  for (const [url, ifMatch] of [['/openapi.json', plain.headers.etag as string], ['/openapi.json', '"other"'], ['/docs/json', plain.headers.etag as string]]) {
    const failed = await app.inject({ method: 'GET', url: url!, headers: { 'if-match': ifMatch!, 'if-none-match': plain.headers.etag as string } })
    const problem = assertProblem(t, failed, 412, 'precondition-failed')
    t.equal(problem.detail, `the ETag of ${url!.split('?')[0]!} is weak and If-Match compares ETags strongly, so only If-Match: * can hold (RFC 9110 §13.1.1)`, `${url!} If-Match: ${ifMatch!}, before If-None-Match`)
    t.equal(failed.headers['cache-control'], 'no-store')
  }

  for (const [coding, decode] of [['gzip', gunzipSync], ['br', brotliDecompressSync]] as const) {
    for (let round = 0; round < 2; round++) {
      const coded = await app.inject({ method: 'GET', url: '/openapi.json', headers: { 'accept-encoding': coding } })
      t.equal(coded.headers['content-encoding'], coding)
      t.equal(coded.headers.etag, plain.headers.etag, 'one tag for the document in every coding (weak)')
      t.ok(decode(coded.rawPayload).equals(plain.rawPayload), `${coding}, round ${round + 1}: the same bytes`)
    }
  }

  const uiJson = await app.inject({ method: 'GET', url: '/docs/json' })
  t.ok(uiJson.rawPayload.equals(plain.rawPayload), '/docs/json is the same document')
  t.equal(uiJson.headers.etag, plain.headers.etag)
  const uiYaml = await app.inject({ method: 'GET', url: '/docs/yaml', headers: { 'accept-encoding': 'gzip' } })
  t.equal(uiYaml.headers['content-type'], 'application/x-yaml')
  t.equal(uiYaml.headers['cache-control'], 'public, no-cache')
  const yamlText = gunzipSync(uiYaml.rawPayload).toString('utf8')
  t.same(parse(yamlText), document, '/docs/yaml says the same')
  t.equal(yamlText, stringify(document, { aliasDuplicateObjects: false }), 'in the committed file\'s form: every object written out, no anchors or aliases')
  t.equal((await app.inject({ method: 'GET', url: '/docs/yaml', headers: { 'if-none-match': uiYaml.headers.etag as string } })).statusCode, 304)
  t.equal((await app.inject({ method: 'GET', url: '/docs' })).statusCode, 200, 'the UI itself is untouched')
})

/** The folder of swagger-ui's assets, as the UI serves it at /docs/static/. */
const UI_STATIC = join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui')), 'static')

t.test('the UI\'s scripts and style sheets are kept like the document: whole, coded once, tagged and revalidated; its icons are files', async t => {
  const app = await buildTestApp(t)
  for (const [file, type] of [['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'], ['swagger-ui.css', 'text/css; charset=utf-8']] as const) {
    const url = `/docs/static/${file}`
    const original = readFileSync(join(UI_STATIC, file))
    const plain = await app.inject({ method: 'GET', url, headers: { authorization: undefined } })
    t.equal(plain.statusCode, 200, file)
    t.equal(plain.headers['content-type'], type)
    t.equal(plain.headers['cache-control'], 'public, no-cache')
    t.match(plain.headers['content-security-policy'], /script-src 'self'/, 'the UI\'s policy, as before')
    t.ok(plain.rawPayload.equals(original), 'the file as it is')
    for (const [coding, decode] of [['br', brotliDecompressSync], ['gzip', gunzipSync]] as const) {
      const coded = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': coding } })
      t.equal(coded.headers['content-encoding'], coding)
      // @fastify/compress streamed each request's file through the coder, chunked; a kept coding is sent whole.
      t.equal(coded.headers['content-length'], String(coded.rawPayload.length), `${coding}: sent whole, with its length`)
      t.match(coded.headers.vary, /Accept-Encoding/)
      t.ok(decode(coded.rawPayload).equals(original), `${coding}: the same file`)
    }
    const revalidated = await app.inject({ method: 'GET', url, headers: { 'if-none-match': plain.headers.etag as string } })
    t.equal(revalidated.statusCode, 304)
    t.equal(revalidated.body, '')
    t.equal((await app.inject({ method: 'HEAD', url })).statusCode, 200)
  }
  const icon = await app.inject({ method: 'GET', url: '/docs/static/favicon-32x32.png' })
  t.equal(icon.statusCode, 200)
  t.equal(icon.headers['content-type'], 'image/png')
  t.ok(icon.rawPayload.equals(readFileSync(join(UI_STATIC, 'favicon-32x32.png'))), 'binary files are still served by swagger-ui, byte for byte')
})

t.test('/openapi.json serves an OpenAPI 3.1 document with stable names', async t => {
  const app = await buildTestApp(t)
  const response = await app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(response.statusCode, 200)
  const document = body(response)
  t.equal(document.openapi, '3.1.0')
  for (const name of ['Problem', 'Project', 'ProjectCreate', 'ProjectReplace', 'ProjectPatch', 'Task', 'TaskCreateInProject', 'Note']) {
    t.ok(document.components.schemas[name], `component ${name}`)
  }
  t.notOk(Object.keys(document.components.schemas).some(name => name.startsWith('def-')), 'no generated def-N names')
  const operations = Object.values(document.paths as Record<string, Record<string, { operationId: string }>>)
    .flatMap(path => Object.values(path).map(operation => operation.operationId))
  for (const id of ['listProjects', 'getProject', 'createProject', 'replaceProject', 'updateProject', 'deleteProject', 'listProjectTasks', 'createProjectTask']) {
    t.ok(operations.includes(id), id)
  }
  t.same(Object.keys(document.paths['/v1/projects/{id}'].patch.requestBody.content).sort(), ['application/json', 'application/merge-patch+json'])
  t.same(document.components.schemas.Task.properties.status.enum, ['todo', 'doing', 'done'])
  t.equal(document.paths['/v1/projects/{id}'].get.responses['404'].content['application/problem+json'].schema.$ref, '#/components/schemas/Problem')
  t.notOk(document.paths['/openapi.json'], 'the document does not list itself')

  const schemes = document.components.securitySchemes
  t.same(Object.keys(schemes).sort(), ['bearerApiKey', 'bearerJwt', 'clientBasic', 'clientCredentials'])
  t.equal(schemes.clientCredentials.flows.clientCredentials.tokenUrl, '/v1/auth/token')
  t.ok(schemes.clientCredentials.flows.clientCredentials.scopes['projects:write'])
  t.same(document.paths['/v1/projects'].post.security, [{ bearerJwt: [] }, { bearerApiKey: [] }, { clientCredentials: ['projects:write'] }])
  t.match(document.paths['/v1/projects'].post.description, /Needs the `projects:write` scope/)
  t.same(document.paths['/v1/projects/{id}/tasks'].get.security[2], { clientCredentials: ['tasks:read'] })
  t.match(document.paths['/v1/projects/{id}/tasks'].get.description, /`tasks:read`/)
  t.same(document.paths['/v1/api-keys'].post.security[2], { clientCredentials: ['admin'] })
  t.same(document.paths['/v1/auth/token'].post.security, [{ clientBasic: [] }])
  t.ok(document.paths['/v1/projects'].get.responses['401'], '401 documented')
  t.notOk(document.paths['/health'].get.security, 'operations are public')
})

t.test('a closed set of strings is one enum everywhere in the document, never a union of literals', async t => {
  const { json } = await openapiDocument(resources)
  const unions: string[] = []
  const isLiteral = (branch: { const?: unknown, enum?: unknown[] }): boolean =>
    typeof branch.const === 'string' || (branch.enum?.length === 1 && typeof branch.enum[0] === 'string')
  const walk = (node: unknown, path: string): void => {
    if (typeof node !== 'object' || node === null) return
    const { anyOf } = node as { anyOf?: Array<{ const?: unknown, enum?: unknown[] }> }
    if (Array.isArray(anyOf) && anyOf.length > 1 && anyOf.every(isLiteral)) unions.push(path)
    for (const [key, value] of Object.entries(node)) walk(value, `${path}/${key}`)
  }
  walk(JSON.parse(json), '')
  // Clients generate one string union from an enum; in a response schema, `anyOf` also costs each serializer an Ajv instance.
  t.same(unions, [], 'no anyOf of string literals')
  const problem = JSON.parse(json).components.schemas.Problem
  t.same(problem.properties.errors.items.properties.in, { type: 'string', enum: ['body', 'query', 'path', 'header'] })
})

t.test('/docs serves the interactive documentation with its assets, no CDN', async t => {
  const app = await buildTestApp(t)
  const page = await app.inject({ method: 'GET', url: '/docs' })
  const html = page.statusCode === 302 ? await app.inject({ method: 'GET', url: page.headers.location as string }) : page
  t.equal(html.statusCode, 200)
  t.match(html.headers['content-type'], /text\/html/)
  t.notMatch(html.body, /https?:\/\/(cdn|unpkg|cdnjs)/, 'assets are served locally')
  const script = await app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' })
  t.equal(script.statusCode, 200)
})

t.test('every request and response schema has an example, and it is valid', async t => {
  const app = await buildTestApp(t)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const Ajv = AjvModule.default
  const ajv = new Ajv({ strict: false })
  formatsModule.default(ajv)
  ajv.addSchema({ $id: 'doc', components: document.components })
  // Problem's examples are per status, on each response (the next test).
  const names = Object.keys(document.components.schemas).filter(name => name !== 'Problem')
  t.ok(names.length >= 20, `${names.length} schemas`)
  for (const name of names) {
    const schema = document.components.schemas[name]
    t.ok(Array.isArray(schema.examples) && schema.examples.length > 0, `${name} has an example`)
    const validate = ajv.compile({ $ref: `doc#/components/schemas/${name}` })
    t.ok(validate(schema.examples[0]), `${name}'s example is valid: ${ajv.errorsText(validate.errors)}`)
  }
})

t.test('a 400 example is about what its operation takes: body errors only where there is a body, and as the service words them', async t => {
  const app = await buildTestApp(t)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  type Operation = { requestBody?: unknown, parameters?: Array<{ in: string }>, responses: Record<string, { content: Record<string, { example: { errors: Array<{ in: string }> } }> }> }
  let checked = 0
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Operation>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const refusal = operation.responses?.['400']
      if (refusal === undefined) continue
      // The token endpoint's refusals are OAuth's (RFC 6749 §5.2): an `error` code, no `errors`.
      if (path === '/v1/auth/token') {
        t.match(refusal.content['application/problem+json']!.example, { error: 'unsupported_grant_type' }, 'POST /v1/auth/token: an OAuth error')
        continue
      }
      const places = new Set(refusal.content['application/problem+json']!.example.errors.map(issue => issue.in))
      const taken = new Set([...operation.requestBody === undefined ? [] : ['body'], ...(operation.parameters ?? []).map(parameter => parameter.in)])
      // A route that takes no body, query or path still answers 400 for a query: that is the example it shows (its headers are optional conditions).
      const allowed = [...taken].every(place => place === 'header') ? new Set(['query']) : taken
      t.ok([...places].every(place => allowed.has(place)), `${method.toUpperCase()} ${path}: example errors in ${[...places].join(', ')}; it takes ${[...taken].join(', ') || 'nothing'}`)
      checked++
    }
  }
  t.ok(checked > 30, `${checked} operations checked`)

  // The examples read as real answers do.
  const list = body(await app.inject({ method: 'GET', url: '/v1/projects?limit=0', headers: { authorization: ADMIN } }))
  t.same(document.paths['/v1/projects'].get.responses['400'].content['application/problem+json'].example.errors, list.errors)
  const record = body(await app.inject({ method: 'GET', url: '/v1/projects/0', headers: { authorization: ADMIN } }))
  t.same(document.paths['/v1/projects/{id}'].get.responses['400'].content['application/problem+json'].example.errors, record.errors)
  const keys = body(await app.inject({ method: 'GET', url: '/v1/api-keys?limit=0', headers: { authorization: ADMIN } }))
  t.same(document.paths['/v1/api-keys'].get.responses['400'].content['application/problem+json'].example.errors, keys.errors)
})

t.test('a list documents If-Match and its 412 as the list answers it', async t => {
  const app = await buildTestApp(t)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  for (const [path, url] of [['/v1/projects', '/v1/projects'], ['/v1/projects/{id}/tasks', '/v1/projects/1/tasks']] as const) {
    await createProject(app)
    const answer = assertProblem(t, await app.inject({ method: 'GET', url, headers: { authorization: ADMIN, 'if-match': '"any"' } }), 412)
    const operation = document.paths[path].get
    t.ok((operation.parameters as Json[]).some(parameter => parameter.in === 'header' && parameter.name === 'If-Match'), `${path} documents If-Match`)
    t.equal(operation.responses['412'].content['application/problem+json'].example.detail, answer.detail, `${path}: the example is the list's own 412`)
  }
  t.equal(document.paths['/v1/projects/{id}'].get.responses['412'].content['application/problem+json'].example.detail, 'the project has changed since that ETag; GET it again', 'a record keeps its own')
})

t.test('the admin collections document their ETags, 304 and 412 as they answer them', async t => {
  const app = await buildTestApp(t)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const headerNames = (operation: Json): string[] => (operation.parameters as Json[]).filter(parameter => parameter.in === 'header').map(parameter => parameter.name as string).sort()
  for (const path of ['/v1/api-keys', '/v1/clients', '/v1/webhooks', '/v1/webhooks/{id}/deliveries']) {
    const list = document.paths[path].get
    t.same(headerNames(list), ['If-Match', 'If-None-Match'], `${path}: the tag conditions, and no date ones`)
    t.match(list.responses['200'].headers.ETag.description, /^Weak/, path)
    t.ok(list.responses['304'], `${path}: 304`)
    t.match(list.responses['412'].content['application/problem+json'].example.detail, /only If-Match: \* can hold/)
  }
  const key = body(await app.inject({ method: 'POST', url: '/v1/api-keys', headers: { authorization: ADMIN }, payload: { name: 'documented', scopes: ['admin'] } }))
  const refused = assertProblem(t, await app.inject({ method: 'DELETE', url: `/v1/api-keys/${key.id as number}`, headers: { authorization: ADMIN, 'if-match': '"any"' } }), 412)
  for (const method of ['get', 'delete']) {
    const operation = document.paths['/v1/api-keys/{id}'][method]
    t.same(headerNames(operation), ['If-Match', 'If-None-Match'], method)
    t.equal(operation.responses['412'].content['application/problem+json'].example.detail, refused.detail, `${method}: the example is the real answer`)
  }
  t.match(document.paths['/v1/api-keys/{id}'].get.responses['200'].headers.ETag.description, /^Strong/)
})

t.test('every problem response shows an example of its own status that the Problem schema accepts, as the service answers it', async t => {
  const app = await buildTestApp(t)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const Ajv = AjvModule.default
  const ajv = new Ajv({ strict: false })
  ajv.addSchema({ $id: 'doc', components: document.components })
  const validate = ajv.compile({ $ref: 'doc#/components/schemas/Problem' })
  let checked = 0
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { example?: Json }> }> }>>)) {
    for (const [method, operation] of Object.entries(item)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const media = response.content?.['application/problem+json']
        if (media === undefined) continue
        const where = `${method.toUpperCase()} ${path} ${status}`
        if (!t.ok(media.example, `${where} has an example`)) continue
        t.equal(media.example!.status, Number(status), `${where}: the example is a ${status}`)
        t.ok(validate(media.example), `${where}: ${ajv.errorsText(validate.errors)}`)
        checked++
      }
    }
  }
  t.ok(checked > 300, `${checked} problem responses checked`)

  // The examples' type and title are the ones real answers carry.
  const real = body(await app.inject({ method: 'GET', url: '/v1/projects/1', headers: { authorization: ADMIN } }))
  const example = document.paths['/v1/projects/{id}'].get.responses['404'].content['application/problem+json'].example
  t.same({ type: example.type, title: example.title }, { type: real.type, title: real.title })
})

t.test('a response header every answer carries is marked required; one only some carry is not, and says when', async t => {
  const app = await buildTestApp(t)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  const presence = (path: string, method: string, status: string): Record<string, boolean> => Object.fromEntries(
    Object.entries(document.paths[path][method].responses[status].headers as Record<string, Json>).map(([name, entry]) => {
      const header = resolveHeader(document, entry)
      t.notOk('required' in (header.schema as Json) || 'shared' in (header.schema as Json), `${path} ${status} ${name}: the marks are the header's, not its schema's`)
      return [name, header.required === true]
    }))
  const limits = { 'X-RateLimit-Limit': false, 'X-RateLimit-Remaining': false, 'X-RateLimit-Reset': false, 'RateLimit-Policy': false, RateLimit: false }
  const always = { 'X-Request-Id': true, 'Cache-Control': true }
  t.same(presence('/v1/projects/{id}', 'get', '200'), { ETag: true, 'Last-Modified': true, ...always, ...limits })
  t.same(presence('/v1/projects', 'get', '200'), { 'X-Total-Count': false, Link: true, ETag: true, ...always, ...limits })
  t.same(presence('/v1/projects', 'post', '201'), { Location: true, ETag: true, 'Last-Modified': true, 'Preference-Applied': false, ...always, ...limits, 'Idempotent-Replayed': false })
  t.same(presence('/v1/projects', 'get', '429'), { 'X-RateLimit-Limit': true, 'X-RateLimit-Remaining': true, 'X-RateLimit-Reset': true, 'RateLimit-Policy': true, RateLimit: true, 'Retry-After': true, ...always })
  t.same(presence('/v1/projects', 'get', '401'), { ...always, ...limits, 'WWW-Authenticate': true })
  t.same(presence('/v1/api-keys', 'get', '200'), { 'X-Total-Count': true, Link: false, ETag: true, ...always, ...limits })
  t.same(presence('/health', 'get', '200'), always, 'an unlimited route has no rate-limit headers')
  t.match(document.paths['/v1/projects'].get.responses['200'].headers['X-RateLimit-Limit'].description, /Absent while the Redis counters are unreachable/)
})

t.test('a header described the same on every answer is in the components once, and each answer refers to it', async t => {
  const app = await buildTestApp(t)
  const document = body(await app.inject({ method: 'GET', url: '/openapi.json' }))
  t.same(Object.keys(document.components.headers).sort(), ['Retry-After', 'WWW-Authenticate', 'X-Request-Id'])
  t.match(document.components.headers['X-Request-Id'], { schema: { type: 'string' }, required: true, description: /request's id/ })
  const responses = Object.values(document.paths as Record<string, Record<string, Json>>).flatMap(methods => Object.values(methods)).flatMap(operation => Object.values(operation.responses as Record<string, Json>))
  t.ok(responses.length > 100)
  t.ok(responses.every(response => response.headers['X-Request-Id'].$ref === '#/components/headers/X-Request-Id'), 'every answer refers to X-Request-Id')
  const basic = document.paths['/v1/auth/token'].post.responses['401'].headers['WWW-Authenticate']
  t.match(basic, { description: /^`Basic realm="token"`/, required: true }, 'the token endpoint\'s own challenge is written in place')
  t.equal(document.paths['/v1/projects'].get.responses['401'].headers['WWW-Authenticate'].$ref, '#/components/headers/WWW-Authenticate')
})

t.test('two different headers shared under one name are refused when the document is made, not merged', async t => {
  const answer = (description: string) => ({ headers: { 'X-Trace': { schema: { type: 'string', required: true, shared: true }, description } } })
  t.throws(() => documentHeaders({ paths: { '/a': { get: { responses: { 200: answer('one') } } }, '/b': { get: { responses: { 200: answer('two') } } } } }), /two different response headers are both shared as X-Trace/)
  const same: Json = documentHeaders<Json>({ paths: { '/a': { get: { responses: { 200: answer('one') } } }, '/b': { get: { responses: { 200: answer('one') } } } } })
  t.same(same.components, { headers: { 'X-Trace': { schema: { type: 'string' }, description: 'one', required: true } } })
})
