import { existsSync } from 'node:fs'
import { appendFile } from 'node:fs/promises'
import BetterSqlite3 from 'better-sqlite3'
import t from 'tap'
import { assertProblem, body, buildTestApp, testDatabaseFile, TEST_JWT_SECRET } from './helper.js'
import { fromRoot } from './support/paths.js'
import { runNode } from './support/run-node.js'

const CLI = fromRoot('dist/src/cli.js')

async function cli (args: string[], env: Record<string, string>): Promise<{ status: number | null, stdout: string, stderr: string, last: string }> {
  const result = await runNode([CLI, ...args], { PATH: process.env.PATH ?? '', JWT_SECRET: TEST_JWT_SECRET, ...env })
  const lines = result.stdout.trim().split('\n')
  return { ...result, last: lines.at(-1) ?? '' }
}

t.test('keys create prints the key as the last line; it works until revoked (API_KEY_CACHE_TTL=0)', async t => {
  const file = testDatabaseFile(t)
  const env = { DATABASE_URL: `sqlite:${file}`, DATA_DIR: `${file}.data` }
  const created = await cli(['keys', 'create', '--name', 'ci', '--scopes', 'projects:read tasks:read', '--expires', '30d'], env)
  t.equal(created.status, 0, created.stderr)
  t.match(created.last, /^rsy_[A-Za-z0-9_-]{43}$/)
  const listed = await cli(['keys', 'list'], env)
  t.match(listed.stdout, /^1\trsy_\S+…\tci\tprojects:read tasks:read\texpires \d{4}-/m)
  t.notMatch(listed.stdout, created.last, 'the list does not show the key')

  // The CLI is another process: the server sees its revocation within API_KEY_CACHE_TTL.
  const app = await buildTestApp(t, { databaseUrl: `sqlite:${file}`, env: { API_KEY_CACHE_TTL: '0' } })
  const authorization = `Bearer ${created.last}`
  t.equal((await app.inject({ method: 'GET', url: '/v1/tasks', headers: { authorization } })).statusCode, 200)
  const apiKeys = body(await app.inject({ method: 'GET', url: '/v1/api-keys' }))
  t.match(apiKeys[0].expiresAt, /^\d{4}-/)
  t.equal((await cli(['keys', 'revoke', '1'], env)).status, 0)
  assertProblem(t, await app.inject({ method: 'GET', url: '/v1/tasks', headers: { authorization } }), 401)
  t.equal((await cli(['keys', 'revoke', '1'], env)).status, 2, 'revoking twice is an error')
})

t.test('clients create prints the secret last; token mints a JWT for local use', async t => {
  const file = testDatabaseFile(t)
  const env = { DATABASE_URL: `sqlite:${file}`, DATA_DIR: `${file}.data` }
  const client = await cli(['clients', 'create', '--name', 'svc', '--scopes', 'notes:read'], env)
  t.equal(client.status, 0, client.stderr)
  const clientId = /client_id: (\S+)/.exec(client.stdout)?.[1]
  t.match(clientId, /^rsyc_/)
  const app = await buildTestApp(t, { databaseUrl: `sqlite:${file}` })
  const token = await app.inject({
    method: 'POST',
    url: '/v1/auth/token',
    headers: { authorization: `Basic ${Buffer.from(`${clientId!}:${client.last}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'grant_type=client_credentials'
  })
  t.equal(token.statusCode, 200)

  // A setting misspelled by one letter is ignored, and said so: here the key would land in another database.
  const minted = await cli(['token', '--sub', 'dev', '--scopes', 'projects:read', '--ttl', '10m'], { ...env, DATABSE_URL: 'sqlite:elsewhere.db' })
  t.equal(minted.status, 0, minted.stderr)
  t.equal(minted.stderr, 'resourcery: warning: DATABSE_URL is not a setting and is ignored: did you mean DATABASE_URL?\n')
  const claims = JSON.parse(Buffer.from(minted.last.split('.')[1]!, 'base64url').toString()) as { sub: string, scope: string, exp: number }
  t.equal(claims.sub, 'dev')
  t.equal(claims.scope, 'projects:read')
  t.ok(claims.exp - Date.now() / 1000 <= 600 && claims.exp - Date.now() / 1000 > 590)
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: `Bearer ${minted.last}` } })).statusCode, 200)
})

t.test('usage errors say what is wrong and exit 2', async t => {
  const file = testDatabaseFile(t)
  const env = { DATABASE_URL: `sqlite:${file}` }
  const lifetimes = [['token', '--ttl', '0'], ['keys', '--expires', '36501d'], ['keys', '--expires', '100000000d']] as const
  // Each is a process of its own and none writes: all at once.
  const [unknownScope, missing, unreadableTtl, nonsense, help, unreachable, hugeId, ...outOfRange] = await Promise.all([
    cli(['keys', 'create', '--name', 'x', '--scopes', 'everything'], env),
    cli(['keys', 'create', '--scopes', 'admin'], env),
    cli(['token', '--sub', 'x', '--scopes', 'admin', '--ttl', 'forever'], env),
    cli(['nonsense'], env),
    cli(['help'], env),
    cli(['clients', 'revoke', 'one'], { DATABASE_URL: 'postgres://app@127.0.0.1:1/app' }),
    cli(['keys', 'revoke', '99999999999999999999'], env),
    ...lifetimes.map(async ([command, option, value]) => await cli(command === 'token' ? ['token', '--sub', 'x', '--scopes', 'admin', option, value] : ['keys', 'create', '--name', 'x', '--scopes', 'admin', option, value], env))
  ])
  t.equal(unknownScope!.status, 2)
  t.match(unknownScope!.stderr, /unknown scope everything; known: projects:read/)
  t.equal(missing!.status, 2)
  t.match(missing!.stderr, /--name is required/)
  t.equal(unreadableTtl!.status, 2)
  lifetimes.forEach(([, option, value], i) => {
    t.equal(outOfRange[i]!.status, 2, `${option} ${value}`)
    t.equal(outOfRange[i]!.stderr, `resourcery: ${option} must be from 1 second to 100 years (36500d)\n`, 'said in one line, no stack trace')
  })
  t.equal(nonsense!.status, 2)
  t.equal(help!.status, 0)
  t.equal(unreachable!.status, 2, 'the usage error is found before the database is reached')
  t.match(unreachable!.stderr, /^resourcery: usage: resourcery clients create/)
  t.equal(hugeId!.status, 2, 'an id past 2^53 is not rounded to another one')
  t.match(hugeId!.stderr, /^resourcery: usage: resourcery keys create/)
  t.notOk(existsSync(file), 'no usage error created the database')
})

t.test('openapi writes the document where it is told, and says in one line when it cannot', async t => {
  const dir = t.testdir()
  const written = await cli(['openapi', `${dir}/docs/api.json`], {})
  t.equal(written.status, 0)
  t.equal(written.last, `wrote ${dir}/docs/api.json and ${dir}/docs/api.yaml`, 'its folder made')
  // Node's recursive mkdir loops forever under /proc: the command used to hang there.
  const refused = await runNode([CLI, 'openapi', '/proc/resourcery-test/api.json'], {})
  t.equal(refused.status, 1)
  t.equal(refused.stderr, "resourcery: cannot write /proc/resourcery-test/api.json and /proc/resourcery-test/api.yaml: ENOENT: no such file or directory, mkdir '/proc/resourcery-test'\n")
})

t.test('migrate creates the tables, then finds nothing to do; it adds what is missing and refuses what would lose data', async t => {
  const file = testDatabaseFile(t)
  const env = { DATABASE_URL: `sqlite:${file}`, DATA_DIR: `${file}.data` }
  const first = await cli(['migrate'], env)
  t.equal(first.status, 0, first.stderr)
  const applied = first.stdout.trim().split('\n')
  t.ok(applied.includes('create table tasks'), 'each step applied is a line')
  t.ok(applied.includes('create index tasks_assignee_idx'))
  t.equal((await cli(['migrate'], env)).stdout, 'the database is up to date\n', 'a second run changes nothing')

  const database = new BetterSqlite3(file)
  database.exec('drop index tasks_assignee_idx')
  database.close()
  const repaired = await cli(['migrate'], env)
  t.equal(repaired.status, 0, repaired.stderr)
  t.equal(repaired.stdout, 'create index tasks_assignee_idx\n', 'only the missing index is made again')

  const altered = new BetterSqlite3(file)
  altered.exec("alter table projects add column legacy text not null default 'x'")
  altered.close()
  const refused = await cli(['migrate'], env)
  t.equal(refused.status, 1)
  t.equal(refused.stdout, '')
  t.equal(refused.stderr, 'resourcery: the database schema cannot be brought in line with the definitions without losing data:\n' +
    '- projects.legacy exists in the database but not in the definition: restore the field, or drop or rename the column by hand once its data is safe\n', 'what to do, with no stack trace')
  const kept = new BetterSqlite3(file, { readonly: true })
  t.teardown(() => kept.close())
  t.ok(kept.prepare("select 1 from pragma_table_info('projects') where name = 'legacy'").get(), 'the column was left as it was')
  // The server refuses the same database with the same words.
  const served = await runNode([fromRoot('dist/src/server.js')], { PATH: process.env.PATH ?? '', JWT_SECRET: TEST_JWT_SECRET, PORT: '0', ...env })
  t.equal(served.status, 1)
  t.equal(served.stderr, refused.stderr)
})

t.test('openapi --check exits 0 while the written document is current, and 1 naming the stale file', async t => {
  const dir = t.testdir()
  const json = `${dir}/api.json`
  t.equal((await cli(['openapi', json], {})).status, 0)
  const current = await cli(['openapi', '--check', json], {})
  t.equal(current.status, 0, current.stderr)
  t.equal(current.stdout + current.stderr, '', 'nothing to say')
  await appendFile(`${dir}/api.yaml`, '# edited by hand\n')
  const stale = await cli(['openapi', '--check', json], {})
  t.equal(stale.status, 1)
  t.equal(stale.stderr, `${dir}/api.yaml stale: run npm run openapi\n`)
  const missing = await cli(['openapi', '--check', `${dir}/none.json`], {})
  t.equal(missing.status, 1)
  t.equal(missing.stderr, `${dir}/none.json and ${dir}/none.yaml stale: run npm run openapi\n`, 'a document not written yet is stale')
})
