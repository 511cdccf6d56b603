/**
 * The worker thread of documentYamlOffThread (document-yaml.ts): given the
 * document's JSON, answers with its YAML, then ends.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { documentYaml } from './document-yaml.js'

if (parentPort === null) throw new Error('document-yaml-worker.js runs only as a worker thread (document-yaml.ts starts it)')
parentPort.postMessage(documentYaml(JSON.parse(workerData as string)))
