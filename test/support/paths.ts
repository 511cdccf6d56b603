/**
 * Where the project's files are, whether a test runs compiled (dist/test/…,
 * as `npm test` runs it) or from its TypeScript source through tsx.
 */
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

function projectRoot (): string {
  for (let folder = dirname(fileURLToPath(import.meta.url)); ; folder = dirname(folder)) {
    if (existsSync(join(folder, 'package.json'))) return folder
    if (dirname(folder) === folder) throw new Error('no package.json above the test support folder')
  }
}

export const PROJECT_ROOT = projectRoot()

/** A path inside the project, from its root: `fromRoot('dist/src/server.js')`. */
export function fromRoot (path: string): string {
  return join(PROJECT_ROOT, path)
}

/**
 * Node's arguments that run the test module `relative` (without its extension)
 * found beside the module at `from` (its import.meta.url), in the form that
 * module runs as: compiled, or through tsx.
 */
export function nodeArgsFor (from: string, relative: string): string[] {
  const typescript = from.endsWith('.ts')
  const file = fileURLToPath(new URL(`${relative}.${typescript ? 'ts' : 'js'}`, from))
  return typescript ? ['--import=tsx', file] : [file]
}
