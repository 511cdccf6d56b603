import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import { PROJECT_ROOT } from '../support/paths.js'

const execFileAsync = promisify(execFile)

t.test('Spectral (spectral:oas, .spectral.yaml) finds no error and no warning in the committed document', async t => {
  // The JSON only: openapi.yaml says the same document (openapi.test.ts), and linting it again took as long.
  const file = 'openapi/openapi.json'
  // --fail-severity=warn: exit 1 on any warning as well as any error.
  const result = await execFileAsync('npx', ['spectral', 'lint', file, '--fail-severity=warn', '--ruleset', '.spectral.yaml'], { cwd: PROJECT_ROOT }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number, stdout: string }) => ({ code: error.code, stdout: error.stdout })
  )
  t.equal(result.code, 0, `${file}: ${result.stdout}`)
  t.match(result.stdout, /No results with a severity of 'warn' or higher found/)
})
