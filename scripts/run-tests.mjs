// Runs the compiled test files (`npm test` builds them first), `jobs` at a
// time, each as a plain `node` process, and reports each file as it ends: its
// counts, its skipped tests with their reasons, and the whole TAP output of a
// file that failed. The last line is tap's own summary form,
// `# { total, pass, fail, skip }`, which .ci/run adds up.
//
// Why not tap's runner: it loads @tapjs/processinfo's module hooks into every
// test process and, through NODE_OPTIONS, into every process a test starts
// (the server, the CLI). On Node 20 those hooks run every import through a
// second thread: a server start took 3.4 s of CPU instead of 1.9, and each
// test file about 2 s more, a quarter of the suite. The files are still tap
// tests: `npx tap dist/test/x.test.js` runs one under tap.
//
// Usage: node scripts/run-tests.mjs [file …]   (default: every dist/test/**/*.test.js)
// Settings: package.json's "tap" section (jobs, timeout, node-arg), which `npx tap` reads too.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Parser } from 'tap-parser'

const root = fileURLToPath(new URL('..', import.meta.url))
const settings = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).tap
const jobs = Number(settings.jobs ?? 2)
const timeoutSeconds = Number(settings.timeout ?? 30)
const nodeArgs = settings['node-arg'] ?? []

function testFiles (folder) {
  return readdirSync(folder, { recursive: true })
    .filter(name => name.endsWith('.test.js'))
    .map(name => relative(root, join(folder, name)))
    .sort()
}

/** Every skipped test point in a file's TAP, nested subtests included, as `a › b: reason`. */
function collectSkips (parser, path, skips) {
  parser.on('assert', point => {
    if (point.skip) skips.push(`${[...path, point.name].join(' › ')}: ${point.skip === true ? 'skipped' : point.skip}`)
  })
  parser.on('child', child => collectSkips(child, [...path, child.name], skips))
}

/** tap's closing comment on a file's root test: `# { total: 44, pass: 43, skip: 1 }`. */
function countsIn (comment) {
  const match = /^# \{ (total: \d+.*) \}$/.exec(comment.trim())
  if (match === null) return undefined
  return Object.fromEntries(match[1].split(', ').map(pair => pair.split(': ')).map(([key, value]) => [key, Number(value)]))
}

function runFile (file) {
  return new Promise(resolve => {
    const started = Date.now()
    const child = spawn(process.execPath, [...nodeArgs, file], {
      cwd: root,
      env: { ...process.env, TAP_TIMEOUT: String(timeoutSeconds) },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    const output = []
    const skips = []
    let counts
    let parsed
    const parser = new Parser(results => { parsed = results })
    collectSkips(parser, [], skips)
    parser.on('comment', comment => { counts = countsIn(comment) ?? counts })
    child.stdout.on('data', chunk => { output.push(chunk); parser.write(chunk) })
    child.stderr.on('data', chunk => output.push(chunk))
    // tap times out the file's own tests; this ends a process that hangs past them (an open handle, say).
    let overran = false
    const deadline = setTimeout(() => { overran = true; child.kill('SIGKILL') }, (timeoutSeconds + 30) * 1000)
    child.on('close', (code, signal) => {
      clearTimeout(deadline)
      parser.end()
      const ok = code === 0 && parsed?.ok === true && counts !== undefined
      resolve({ file, ok, code, signal, overran, counts: counts ?? { total: 0 }, skips, output: Buffer.concat(output).toString('utf8'), seconds: (Date.now() - started) / 1000 })
    })
  })
}

function report (result, index) {
  const { total = 0, pass = 0, fail = 0, skip = 0 } = result.counts
  const counted = `${pass}/${total} passed${skip > 0 ? `, ${skip} skipped` : ''}${fail > 0 ? `, ${fail} failed` : ''}`
  console.log(`${result.ok ? 'ok' : 'not ok'} ${index} - ${result.file} # ${counted} in ${result.seconds.toFixed(1)} s`)
  for (const skip of result.skips) console.log(`  # SKIP ${skip}`)
  if (!result.ok) {
    const ended = result.overran ? `was killed, still running ${timeoutSeconds + 30} s in` : result.signal !== null ? `ended on ${result.signal}` : `exited ${result.code}`
    console.log(`  # the process ${ended}; its output:`)
    console.log(result.output.replace(/^/gm, '    '))
  }
}

const files = process.argv.length > 2 ? process.argv.slice(2) : testFiles(join(root, 'dist/test'))
const started = Date.now()
const results = []
let next = 0
async function worker () {
  while (next < files.length) {
    const result = await runFile(files[next++])
    results.push(result)
    report(result, results.length)
  }
}
console.log('TAP version 14')
await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, worker))
console.log(`1..${results.length}`)

const failed = results.filter(result => !result.ok)
const sum = key => results.reduce((total, result) => total + (result.counts[key] ?? 0), 0)
if (failed.length > 0) console.log(`# failed: ${failed.map(result => result.file).join(', ')}`)
// A file that failed with no failed test point (it crashed, hung, or exited non-zero) counts as one failure.
const failures = sum('fail') + failed.filter(result => (result.counts.fail ?? 0) === 0).length
console.log(`# { total: ${sum('total')}, pass: ${sum('pass')}, fail: ${failures}, skip: ${sum('skip')} }`)
console.log(`# time=${Date.now() - started}ms`)
process.exitCode = failed.length > 0 ? 1 : 0
