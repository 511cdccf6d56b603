// After `tsc`: removes what dist/ holds of TypeScript files that no longer
// exist. tsc writes each source's output but never deletes one, and the test
// run picks its files from dist/test/, so a renamed or deleted test would go
// on running from its stale compiled copy.
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const dist = join(root, 'dist')
/** The folders tsconfig.json compiles into dist/; anything else there (the typed-client test's output) is left alone. */
const COMPILED = ['src', 'schemas', 'test', 'scripts', 'bench']
const OUTPUT = /\.js(?:\.map)?$/

function prune (folder) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) {
      prune(path)
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true })
    } else if (OUTPUT.test(entry.name) && !existsSync(join(root, relative(dist, path).replace(OUTPUT, '.ts')))) {
      rmSync(path)
    }
  }
}

for (const folder of COMPILED) if (existsSync(join(dist, folder))) prune(join(dist, folder))
