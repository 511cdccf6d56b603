/**
 * The Node flags `npm start` gives the server, read from the package.json of
 * a checkout, so that whatever runs the server as production does (the
 * benches, the tests that start it as a process) runs it with the same flags.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The flags between `node` and `dist/src/server.js` in the start script of the package.json in `root`. */
export function startFlags (root: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
  return /\bnode ((?:--\S+ )*)dist\/src\/server\.js/.exec(scripts.start)?.[1]?.split(' ').filter(Boolean) ?? []
}
