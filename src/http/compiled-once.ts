/**
 * Compiled validators and serializers, shared by every route and every app of
 * the process whose schema, shared schemas and options are the same. Fastify
 * compiles one per route part and per response status, and the compilers
 * check and index every shared schema again on each build: building an app
 * spent about a second compiling the same few functions hundreds of times,
 * and the test suite builds hundreds of apps. What Ajv and
 * fast-json-stringify compile depends only on those three inputs, so reusing
 * one compiled for equal inputs changes nothing but the time.
 */
import { hash } from 'node:crypto'
import { BoundedMap } from '../bounded-map.js'

/** Distinct compiled functions kept: far more than one app has, a bound for processes that build many. */
const MAX_COMPILED = 5000

export type CompileOnce<T> = (key: string, compile: () => T) => T

/**
 * For one set of shared schemas and options (a compiler factory's inputs):
 * `once(key, compile)` returns what `compile` returned before for the same
 * key, where the key says everything else the result depends on.
 */
export function compiledOnce<T> (): (externalSchemas: unknown, options: unknown) => CompileOnce<T> {
  const compiled = new BoundedMap<string, T>(MAX_COMPILED)
  return (externalSchemas, options) => {
    // The same for every route of an app: digested once per factory call. Functions among the options
    // (Ajv plugins, say) are written out by their source, which JSON would silently leave out.
    const context = hash('sha256', JSON.stringify([externalSchemas, options ?? null], (_key, value: unknown) => typeof value === 'function' ? `function ${String(value)}` : value))
    return (key, compile) => {
      return compiled.remember(`${context} ${key}`, compile)
    }
  }
}
