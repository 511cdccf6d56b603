/** Every resource the service exposes. Adding a resource = one file + one line here. */
import { labels } from './labels.js'
import { notes } from './notes.js'
import { projects } from './projects.js'
import { tasks } from './tasks.js'

export const resources = [projects, tasks, notes, labels]
