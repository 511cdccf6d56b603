import { spawnSync } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import { createSigner } from 'fast-jwt'
import t from 'tap'
import { resources } from '../../schemas/index.js'
import { buildApp } from '../../src/app.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { SERVER_ENTRY } from '../server/spawn.js'
import { logCollector } from '../helper.js'

t.test('without JWT_SECRET a secret is generated once into DATA_DIR (0600) and reused', async t => {
  const dir = t.testdir()
  const env = { DATABASE_URL: `sqlite:${dir}/app.db`, DATA_DIR: `${dir}/data`, LOG_LEVEL: 'info' }
  const logs = logCollector()
  const first = await buildApp({ config: loadConfig(env), definitions: resources, logStream: logs })
  const file = `${dir}/data/jwt-secret`
  t.equal(statSync(file).mode & 0o777, 0o600, 'readable by the owner only')
  t.ok(logs.lines.some(line => /generated a signing secret/.test(String(line.msg))), 'and it says so in the log')
  await first.close()

  const secret = readFileSync(file, 'utf8').trim()
  const token = createSigner({ key: secret, algorithm: 'HS256', expiresIn: 60000 })({ sub: 's', scope: 'admin' })
  const second = await buildApp({ config: loadConfig(env), definitions: resources })
  t.teardown(() => second.close())
  const response = await second.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: `Bearer ${token}` } })
  t.equal(response.statusCode, 200, 'a restart keeps the same secret')
})

t.test('production refuses to start without JWT_SECRET, naming it', async t => {
  const dir = t.testdir()
  await t.rejects(buildApp({ config: loadConfig({ NODE_ENV: 'production', DATABASE_URL: `sqlite:${dir}/app.db`, DATA_DIR: dir, LOG_LEVEL: 'silent' }), definitions: resources }), ConfigError)
  const result = spawnSync(process.execPath, [SERVER_ENTRY], { env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', DATABASE_URL: `sqlite:${dir}/app.db`, DATA_DIR: dir, PORT: '0' }, encoding: 'utf8' })
  t.equal(result.status, 1)
  t.match(result.stderr, /JWT_SECRET is required when NODE_ENV=production/)
})

t.test('a short JWT_SECRET is refused without echoing it', async t => {
  t.throws(() => loadConfig({ JWT_SECRET: 'hunter2' }), /JWT_SECRET \(value hidden\) is not valid/)
  try {
    loadConfig({ JWT_SECRET: 'hunter2' })
  } catch (error) {
    t.notMatch((error as Error).message, /hunter2/)
  }
})
