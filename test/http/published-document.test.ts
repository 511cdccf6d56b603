/**
 * A published document (src/http/published-document.ts) is made once, at its
 * first request, however many ask while it is being made; a making that fails
 * answers 500 and leaves the next request to try again. The OpenAPI YAML is
 * made on a worker thread (src/http/document-yaml.ts), so the event loop
 * goes on while it is.
 */
import Fastify from 'fastify'
import t from 'tap'
import { stringify } from 'yaml'
import { documentYaml, documentYamlOffThread } from '../../src/http/document-yaml.js'
import { publishedDocument } from '../../src/http/published-document.js'

t.test('requests that come while the document is made wait for that one making, and a failed making is tried again', async t => {
  let makings = 0
  let release: (body: string) => void = () => {}
  let begun: () => void = () => {}
  const secondMakingBegun = new Promise<void>(resolve => { begun = resolve })
  const make = async (): Promise<string> => {
    makings++
    if (makings === 1) throw new Error('the first making fails')
    begun()
    return await new Promise<string>(resolve => { release = resolve })
  }
  const app = Fastify()
  app.get('/document', publishedDocument('text/plain; charset=utf-8', make))
  t.teardown(async () => { await app.close() })

  const failed = await app.inject({ method: 'GET', url: '/document' })
  t.equal(failed.statusCode, 500, 'a making that fails is an error')

  const waiting = [app.inject({ method: 'GET', url: '/document' }), app.inject({ method: 'GET', url: '/document' })]
  await secondMakingBegun
  release('the document')
  const answers = await Promise.all(waiting)
  t.same(answers.map(answer => [answer.statusCode, answer.body]), [[200, 'the document'], [200, 'the document']], 'both are answered with the one making')
  t.equal(answers[0]!.headers.etag, answers[1]!.headers.etag)
  t.equal(answers[0]!.headers['cache-control'], 'public, no-cache')
  t.equal((await app.inject({ method: 'GET', url: '/document' })).body, 'the document', 'and kept')
  t.equal(makings, 2, 'once after the failure, for every request since')
})

t.test('prepare makes the document before any request, which then makes nothing; a failed one leaves the request to try again', async t => {
  let makings = 0
  const make = (): string => {
    makings++
    if (makings === 1) throw new Error('the first making fails')
    return 'the document'
  }
  const document = publishedDocument('text/plain; charset=utf-8', make)
  const app = Fastify()
  app.get('/document', document)
  t.teardown(async () => { await app.close() })

  await t.rejects(document.prepare(), /the first making fails/)
  await document.prepare()
  t.equal(makings, 2, 'made again after the failure')
  const answer = await app.inject({ method: 'GET', url: '/document' })
  t.same([answer.statusCode, answer.body], [200, 'the document'])
  t.equal(makings, 2, 'the request used what prepare made')
})

t.test('the YAML is made on a worker thread: the event loop turns before it is ready', async t => {
  // One object in two places, as @fastify/swagger's document shares its schemas.
  const responses = { 200: { description: 'ok' } }
  const document = { openapi: '3.1.0', paths: { '/a': { get: { responses } }, '/b': { get: { responses } } } }
  let turned = false
  setImmediate(() => { turned = true })
  const yaml = await documentYamlOffThread(JSON.stringify(document))
  t.ok(turned, 'a callback queued behind it ran before it was ready')
  t.equal(yaml, documentYaml(document), 'the same text as made on the main thread')
  t.equal(yaml, stringify(document, { aliasDuplicateObjects: false }), 'written out in full')
  t.notMatch(documentYaml(document), /[&*]a\d/, 'no anchor and alias for the shared object')
  t.match(stringify(document), /[&*]a\d/, 'which the yaml library would otherwise write')
})
