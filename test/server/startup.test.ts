// Starting the built server: it boots on a fresh file, keeps what it acknowledged across a SIGKILL, and refuses a start it cannot make with one line saying what to fix.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { ADMIN } from '../helper.js'
import { startFlags } from '../../bench/start-flags.js'
import { fromRoot, PROJECT_ROOT } from '../support/paths.js'
import { runNode } from '../support/run-node.js'
import { SERVER_ENTRY, startServer } from './spawn.js'

t.test('the entry point boots on a fresh SQLite file and serves /health', async t => {
  const dir = t.testdir()
  const file = `${dir}/nested/app.db`
  // A setting misspelled by one letter: the server runs on the default, and says so.
  const server = await startServer({ DATABASE_URL: `sqlite:${file}`, CORS_ORIGIN: 'https://app.example.com' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  t.ok(existsSync(file), 'the database file and its folder were created')
  t.match(server.logs.find(line => line.variable === 'CORS_ORIGIN'), { level: 40, meant: 'CORS_ORIGINS', msg: 'CORS_ORIGIN is not a setting and is ignored: did you mean CORS_ORIGINS?' })
  const response = await fetch(`${server.base}/health`)
  t.equal(response.status, 200)
  t.same(await response.json(), { status: 'ok' })
  t.match(response.headers.get('x-request-id'), /^[0-9a-f-]{36}$/)
  t.ok(server.logs.some(line => line.msg === 'database schema updated'), 'tables were created on start')
  // So that no request waits behind the first /openapi.json while @fastify/swagger builds it.
  const made = server.logs.findIndex(line => line.msg === 'OpenAPI document made')
  const listening = server.logs.findIndex(line => String(line.msg).startsWith('Server listening'))
  t.ok(made !== -1 && listening !== -1 && made < listening, 'the OpenAPI document is made before the server listens')
  // Under npm start's Node flags (V8 with no helper threads of its own), the YAML's worker thread still makes it.
  const flags = startFlags(PROJECT_ROOT)
  t.ok(flags.length > 0, 'npm start passes Node flags')
  const commandLine = readFileSync(`/proc/${String(server.child.pid)}/cmdline`, 'utf8').split('\0')
  t.same(commandLine.slice(1, 1 + flags.length), flags, 'the process runs with npm start\'s flags')
  const yaml = await fetch(`${server.base}/docs/yaml`)
  t.equal(yaml.status, 200)
  t.match(await yaml.text(), /^openapi: 3\.1\.0\n/)
})

t.test('acknowledged writes survive SIGKILL (synchronous FULL by default)', async t => {
  const file = `${t.testdir()}/app.db`
  const first = await startServer({ DATABASE_URL: `sqlite:${file}` })
  const ids: number[] = []
  // Concurrent writes in flight when the process dies, as in production.
  await Promise.all(Array.from({ length: 40 }, async (_, i) => {
    const response = await fetch(`${first.base}/v1/projects`, {
      method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: JSON.stringify({ name: `durable ${i}` })
    })
    if (response.status === 201) ids.push((await response.json() as { id: number }).id)
  }))
  t.equal(ids.length, 40, 'every write was acknowledged')
  first.child.kill('SIGKILL')
  t.equal((await first.exited).signal, 'SIGKILL')

  const second = await startServer({ DATABASE_URL: `sqlite:${file}` })
  t.teardown(() => { second.child.kill('SIGKILL') })
  const listed = await fetch(`${second.base}/v1/projects?limit=100`, { headers: { authorization: ADMIN } })
  const list = await listed.json() as Array<{ id: number }>
  // A failure here once answered something other than a list; say what, should it recur.
  if (!Array.isArray(list)) {
    const warnings = second.logs.filter(line => typeof line.level === 'number' && line.level >= 40)
    t.fail(`the restarted server answered ${listed.status}: ${JSON.stringify(list)}; its warnings and errors: ${JSON.stringify(warnings)}`)
  } else {
    t.same(list.map(item => item.id).sort((a, b) => a - b), ids.sort((a, b) => a - b), 'all acknowledged rows are there')
  }
})

t.test('bad configuration stops the start with a message naming the variable', async t => {
  const result = spawnSync(process.execPath, [SERVER_ENTRY], { env: { PATH: process.env.PATH ?? '', PORT: 'eighty', DATABASE_URL: `sqlite:${t.testdir()}/app.db` }, encoding: 'utf8' })
  t.equal(result.status, 1)
  t.match(result.stderr, /PORT="eighty" is not valid: expected a whole number from 0 to 65535/)
  t.notMatch(result.stderr, /\n\s+at /, 'no stack trace')
})

t.test('a database, certificate or port that cannot be used stops the start with one line saying what to fix', async t => {
  const dir = t.testdir({ 'folder.db': {}, 'not-a-pem.txt': 'hello' })
  const listening = await startServer({ DATABASE_URL: `sqlite:${dir}/running.db` })
  t.teardown(() => { listening.child.kill('SIGKILL') })
  const port = new URL(listening.base).port
  const sqlite = `sqlite:${dir}/app.db`
  const cases = [
    // Before, each of these printed a stack trace (the PostgreSQL one with the driver's internals) and nothing naming a setting.
    ['PostgreSQL not listening', { DATABASE_URL: 'postgres://app:s3cret@127.0.0.1:1/app' }, /^resourcery: DATABASE_URL=postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/app: the database cannot be opened or reached: connect ECONNREFUSED/],
    ['a password in the query', { DATABASE_URL: 'postgres://app@127.0.0.1:1/app?password=s3cret' }, /^resourcery: DATABASE_URL=postgres:\/\/app@127\.0\.0\.1:1\/app\?password=\*\*\*: the database cannot be opened or reached/],
    // Node's recursive mkdir loops forever there: the start hung with no output.
    ['a folder that cannot be made', { DATABASE_URL: 'sqlite:/proc/resourcery-test/app.db' }, /^resourcery: DATABASE_URL=sqlite:\/proc\/resourcery-test\/app\.db: the database cannot be opened or reached: ENOENT/],
    ['a folder where the SQLite file should be', { DATABASE_URL: `sqlite:${dir}/folder.db` }, /^resourcery: DATABASE_URL=sqlite:.*folder\.db: the database cannot be opened or reached: unable to open database file/],
    ['a certificate file that is not there', { DATABASE_URL: sqlite, TLS_CERT_FILE: `${dir}/missing.pem`, TLS_KEY_FILE: `${dir}/not-a-pem.txt` }, /^resourcery: TLS_CERT_FILE=.*missing\.pem cannot be read: ENOENT/],
    ['files that are not PEM', { DATABASE_URL: sqlite, TLS_CERT_FILE: `${dir}/not-a-pem.txt`, TLS_KEY_FILE: `${dir}/not-a-pem.txt` }, /^resourcery: TLS_CERT_FILE=.* and TLS_KEY_FILE=.* are not a PEM certificate and its private key: /],
    ['a public key file that is not there', { DATABASE_URL: sqlite, JWT_PUBLIC_KEY: `${dir}/issuer.pem` }, /^resourcery: invalid configuration:\n {2}JWT_PUBLIC_KEY=.*issuer\.pem is neither PEM text nor a file that can be read: ENOENT/],
    ['a data folder that cannot be made', { DATABASE_URL: sqlite, DATA_DIR: '/proc/resourcery-test' }, /^resourcery: invalid configuration:\n {2}DATA_DIR=\/proc\/resourcery-test cannot keep the generated signing secret: ENOENT.*; make it a folder this process can write, or set JWT_SECRET/],
    ['a port another process holds', { DATABASE_URL: sqlite, PORT: port }, new RegExp(`^resourcery: cannot listen on HOST=127\\.0\\.0\\.1 PORT=${port}: another process listens there: stop it or set another PORT`)]
  ] as const
  // All at once: each is a process start of its own.
  const results = await Promise.all(cases.map(async ([, env]) => await runNode([SERVER_ENTRY], { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', DATA_DIR: dir, ...env })))
  cases.forEach(([label, , message], i) => {
    t.equal(results[i]!.status, 1, label)
    t.match(results[i]!.stderr, message, label)
    t.notMatch(results[i]!.stderr, /\n\s+at |s3cret/, `${label}: no stack trace, no password`)
  })
})

t.test('a definition refused when the app is built stops the start with its one line', async t => {
  // The checks made with the validator (validator-checks.ts) run inside buildApp, so a stack would show only the engine's frames.
  const failure = pathToFileURL(fromRoot('dist/src/startup-failure.js')).href
  const define = pathToFileURL(fromRoot('dist/src/resources/define.js')).href
  const script = `import { reportStartupFailure } from '${failure}'; import { DefinitionError } from '${define}'; reportStartupFailure(new DefinitionError('resource "things": field "code" uses the keyword "minlength"'))`
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 })
  t.equal(result.status, 1)
  t.equal(result.stderr, 'resourcery: resource "things": field "code" uses the keyword "minlength"\n')
})
