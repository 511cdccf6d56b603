/**
 * The OpenAPI document as YAML, in one form wherever it is written: the
 * committed openapi/openapi.yaml and the UI's /docs/yaml. Every object is
 * written out in full, without YAML anchors and aliases (`&a1` / `*a1`),
 * which a reader or a code generator would otherwise have to resolve;
 * @fastify/swagger's own YAML uses them for repeated objects.
 */
import { Worker } from 'node:worker_threads'
import { stringify } from 'yaml'

export const documentYaml = (document: unknown): string => stringify(document, { aliasDuplicateObjects: false })

/**
 * documentYaml of the document whose JSON is `json`, made on a worker thread.
 * The `yaml` library took about 0.33 s for the 800 KB document the first
 * time in a process (and longer as definitions are added), all of it on the
 * event loop that answers every other request; on the worker the loop goes
 * on meanwhile. The worker is unreferenced: a stopping process does not wait
 * for it, as the request that asked for it is answered or cut by then.
 */
export async function documentYamlOffThread (json: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./document-yaml-worker.js', import.meta.url), { workerData: json })
    worker.unref()
    worker.once('message', (yaml: string) => { resolve(yaml) })
    worker.once('error', reject)
    // After the message this changes nothing: a promise settles once.
    worker.once('exit', code => { reject(new Error(`the YAML worker stopped (exit code ${code}) before it answered`)) })
  })
}
