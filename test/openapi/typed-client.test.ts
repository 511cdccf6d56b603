import { execFile, spawnSync } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import { ADMIN, buildTestApp, listen } from '../helper.js'
import { PROJECT_ROOT } from '../support/paths.js'

const execFileAsync = promisify(execFile)
const run = (command: string, args: string[], env: Record<string, string> = {}) =>
  spawnSync(command, args, { cwd: PROJECT_ROOT, encoding: 'utf8', env: { ...process.env, ...env } })

t.test('a client typed from openapi/openapi.json compiles and works against a live server', async t => {
  const generated = run('npx', ['openapi-typescript', 'openapi/openapi.json', '--default-non-nullable=false', '-o', 'test/openapi/client/schema.d.ts'])
  t.equal(generated.status, 0, `openapi-typescript: ${generated.stderr}`)
  const compiled = run('npx', ['tsc', '-p', 'test/openapi/client/tsconfig.json'])
  t.equal(compiled.status, 0, `tsc: ${compiled.stdout}${compiled.stderr}`)
  if (compiled.status !== 0) return

  const app = await buildTestApp(t)
  const base = await listen(app)
  // Asynchronously: the server runs in this process and must keep answering while the client runs.
  const client = await execFileAsync(process.execPath, ['dist/typed-client/typed-client.js'], { cwd: PROJECT_ROOT, env: { ...process.env, BASE_URL: base, AUTHORIZATION: ADMIN } })
  t.same(JSON.parse(client.stdout), ['created', 'listed', 'got (active: true)', 'patched', 'problem (no project with id 987654)', 'deleted'])
})
