/**
 * Creating a folder and its missing parents. Node's own `recursive: true`
 * loops forever where mkdir answers ENOENT under a parent that exists, as on
 * /proc and /sys (`DATABASE_URL=sqlite:/proc/x/app.db` hung the start with no
 * output), so each missing level is made here in turn, and a level that
 * cannot be made throws its error, naming the path.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

export function makeFolder (folder: string): void {
  const missing: string[] = []
  for (let level = resolve(folder); !existsSync(level) && dirname(level) !== level; level = dirname(level)) missing.unshift(level)
  for (const level of missing) {
    try {
      mkdirSync(level)
    } catch (error) {
      // Another process starting at the same moment made it first.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
}
