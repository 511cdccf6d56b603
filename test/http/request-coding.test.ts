// Request bodies in a content coding (RFC 9110 §8.4): which are read, which are refused and how, and where Content-Encoding is not looked at.
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect as connectHttp2, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import t from 'tap'
import { ADMIN, assertProblem, body, buildTestApp, createProject, type Json } from '../helper.js'
import { selfSigned } from '../support/self-signed.js'

const JSON_TYPE = { 'content-type': 'application/json' }
const coded = (coding: string, data: Buffer) => ({ headers: { ...JSON_TYPE, 'content-encoding': coding }, payload: data })
const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value))

t.test('a body coded with gzip, deflate or br is read as its JSON, whatever the case of the coding\'s name', async t => {
  const app = await buildTestApp(t)
  const codings: Array<[string, (data: Buffer) => Buffer]> = [
    ['gzip', gzipSync], ['deflate', deflateSync], ['br', brotliCompressSync], ['identity', data => data],
    // Coding names are case-insensitive (§8.4.1), and x-gzip is gzip (§8.4.1.3).
    ['GZIP', gzipSync], ['Br', brotliCompressSync], ['x-gzip', gzipSync], ['X-GZip', gzipSync]
  ]
  for (const [coding, code] of codings) {
    const name = `coded ${coding}`
    const created = await app.inject({ method: 'POST', url: '/v1/projects', ...coded(coding, code(json({ name, budget: 12 }))) })
    t.equal(created.statusCode, 201, `${coding}: ${created.body}`)
    t.match(body(created), { name, budget: 12 }, coding)
  }
  const project = await createProject(app, { name: 'to patch' })
  const patched = await app.inject({
    method: 'PATCH',
    url: `/v1/projects/${String(project.id)}`,
    headers: { 'content-type': 'application/merge-patch+json', 'content-encoding': 'gzip' },
    payload: gzipSync(json({ budget: 7 }))
  })
  t.equal(patched.statusCode, 200, patched.body)
  t.equal(body(patched).budget, 7, 'a merge patch is decoded too')
})

t.test('a coding the service cannot read is a 415 that names the ones it can, in Accept-Encoding too, and nothing is created', async t => {
  const app = await buildTestApp(t)
  for (const coding of ['zstd', 'compress', 'bogus', 'gzip, br']) {
    const refused = await app.inject({ method: 'POST', url: '/v1/projects', ...coded(coding, gzipSync(json({ name: `refused ${coding}` }))) })
    const problem = assertProblem(t, refused, 415, 'unsupported-media-type')
    t.equal(refused.headers['accept-encoding'], 'gzip, deflate, br', `${coding}: Accept-Encoding (RFC 9110 §15.5.16)`)
    t.equal(problem.detail, `a body coded as ${JSON.stringify(coding)} cannot be read here; send it as it is, or coded with one of gzip, deflate, br`)
    t.equal(refused.headers['cache-control'], 'no-store')
  }
  t.same(body(await app.inject({ url: '/v1/projects?name[like]=refused*' })), [], 'no refused body created anything')
  // A 415 for the media type is not about the coding: it carries no Accept-Encoding.
  const plain = await app.inject({ method: 'POST', url: '/v1/projects', headers: { 'content-type': 'text/plain' }, payload: 'name' })
  assertProblem(t, plain, 415, 'unsupported-media-type')
  t.equal(plain.headers['accept-encoding'], undefined)
  t.equal(plain.headers['accept-post'], 'application/json')
})

t.test('a body that is not in the coding it names is a 400, and one that decodes past the body limit a 413', async t => {
  const app = await buildTestApp(t)
  assertProblem(t, await app.inject({ method: 'POST', url: '/v1/projects', ...coded('gzip', Buffer.from('{"name":"not gzip at all"}')) }), 400)
  const truncated = gzipSync(json({ name: 'cut short' }))
  assertProblem(t, await app.inject({ method: 'POST', url: '/v1/projects', ...coded('gzip', truncated.subarray(0, truncated.length - 8)) }), 400)
  // 4 MiB of JSON in about 4 KB: the limit (1 MiB) holds for the decoded body.
  const bomb = gzipSync(Buffer.concat([Buffer.from('{"name":"'), Buffer.alloc(4 * 1024 * 1024, 0x61), Buffer.from('"}')]))
  t.ok(bomb.length < 16 * 1024, `the coded body is small (${bomb.length} bytes)`)
  const tooLarge = assertProblem(t, await app.inject({ method: 'POST', url: '/v1/projects', ...coded('gzip', bomb) }), 413, 'body-too-large')
  t.match(tooLarge.detail, /larger than the limit of 1048576 bytes/)
  t.same(body(await app.inject({ url: '/v1/projects' })), [], 'nothing was created')
})

t.test('Content-Encoding describes a body: a request without one is not refused for it', async t => {
  const app = await buildTestApp(t)
  const project = await createProject(app, { name: 'kept' })
  const bogus = { 'content-encoding': 'bogus' }
  t.equal((await app.inject({ url: '/v1/projects', headers: bogus })).statusCode, 200, 'GET of a list')
  t.equal((await app.inject({ url: `/v1/projects/${String(project.id)}`, headers: bogus })).statusCode, 200, 'GET of a record')
  t.equal((await app.inject({ method: 'HEAD', url: '/v1/projects', headers: bogus })).statusCode, 200, 'HEAD')
  // A POST with no body is refused as one without the header is: for the body it lacks.
  const withHeader = await app.inject({ method: 'POST', url: '/v1/projects', headers: { ...JSON_TYPE, 'content-encoding': 'gzip', 'content-length': '0' } })
  const without = await app.inject({ method: 'POST', url: '/v1/projects', headers: { ...JSON_TYPE, 'content-length': '0' } })
  t.equal(withHeader.statusCode, without.statusCode, `an empty POST: ${withHeader.body}`)
  t.equal(body(withHeader).type, body(without).type)
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/projects/${String(project.id)}`, headers: bogus })).statusCode, 204, 'DELETE with no body')
})

t.test('the document tells of the codings: Accept-Encoding on every 415', async t => {
  const app = await buildTestApp(t)
  await app.ready()
  const refused = (app.swagger() as Json).paths['/v1/projects'].post.responses['415']
  t.match(refused.description, /Content-Encoding is not gzip, deflate or br/)
  t.match(refused.headers?.['Accept-Encoding']?.description, /gzip, deflate, br/)
})

/** One exchange on an HTTP/2 session: the status and the body's text; `data` is sent with no content-length. */
async function h2 (session: ClientHttp2Session, headers: OutgoingHttpHeaders, data?: Buffer): Promise<{ status: number, text: string }> {
  const stream = session.request({ authorization: ADMIN, ...headers }, { endStream: data === undefined })
  if (data !== undefined) stream.end(data)
  let status = 0
  let text = ''
  stream.on('response', response => { status = Number(response[':status']) })
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => { text += chunk })
  await once(stream, 'close')
  return { status, text }
}

t.test('over HTTP/2, where a body needs no length, a coded body is read and a request without one is not refused', async t => {
  // Not in t.testdir(), which the test app's database empties.
  const certificates = mkdtempSync(join(tmpdir(), 'h2-coding-'))
  t.teardown(() => rmSync(certificates, { recursive: true, force: true }))
  const tls = selfSigned(certificates, 'h2-coding')
  const ca = readFileSync(tls.cert, 'utf8')
  const app = await buildTestApp(t, { env: { HTTP2: '1', TLS_CERT_FILE: tls.cert, TLS_KEY_FILE: tls.key }, tls: { cert: ca, key: readFileSync(tls.key, 'utf8') } })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const session = connectHttp2(`https://127.0.0.1:${(app.server.address() as AddressInfo).port}`, { ca })
  t.teardown(() => session.close())
  const created = await h2(session, { ':method': 'POST', ':path': '/v1/projects', 'content-type': 'application/json', 'content-encoding': 'GZIP' }, gzipSync(json({ name: 'over h2' })))
  t.equal(created.status, 201, created.text)
  t.match(JSON.parse(created.text), { name: 'over h2' })
  const refused = await h2(session, { ':method': 'POST', ':path': '/v1/projects', 'content-type': 'application/json', 'content-encoding': 'bogus' }, json({ name: 'refused over h2' }))
  t.equal(refused.status, 415, refused.text)
  const id = String(JSON.parse(created.text).id)
  t.equal((await h2(session, { ':method': 'DELETE', ':path': `/v1/projects/${id}`, 'content-encoding': 'bogus' })).status, 204, 'a DELETE whose headers end its stream')
})
