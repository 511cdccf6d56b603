/**
 * Turning a validated request body into the values a write stores: replace
 * (PUT) and JSON Merge Patch (PATCH, RFC 7396), and the rules that read-only
 * properties, and a related create's parent, may be echoed back but never changed.
 */
import { isDeepStrictEqual } from 'node:util'
import type { ProblemIssue } from '../errors.js'
import type { StoredRecord } from '../store/store.js'
import { linksOf } from './links.js'
import { storedForm, type Resource } from './model.js'

type Body = Readonly<Record<string, unknown>>

/** The writable fields of a body; absent ones stay undefined, which stores no value. */
export function writableValues (resource: Resource, body: Body): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  for (const field of resource.fields.values()) {
    if (body[field.name] !== undefined) values[field.name] = storedForm(field, body[field.name])
  }
  return values
}

/**
 * What a PUT stores: the body's writable values, and the stored value of each
 * write-only field the body leaves out. A client never reads a write-only
 * value, so it cannot send one back: a GET body edited and PUT back keeps it.
 */
export function replacedValues (resource: Resource, current: StoredRecord, body: Body): Record<string, unknown> {
  const values = writableValues(resource, body)
  for (const field of resource.fields.values()) {
    if (field.writeOnly && values[field.name] === undefined && current.values[field.name] !== undefined) values[field.name] = current.values[field.name]
  }
  return values
}

/** Every read-only property of the body that differs from the stored record. */
export function readOnlyChanges (resource: Resource, body: Body, current: StoredRecord): ProblemIssue[] {
  const actual: Record<string, unknown> = {
    id: current.id,
    createdAt: current.createdAt,
    updatedAt: current.updatedAt,
    links: linksOf(resource, current)
  }
  if (resource.owner !== undefined) actual[resource.owner] = current.values[resource.owner]
  const issues: ProblemIssue[] = []
  for (const [name, value] of Object.entries(actual)) {
    if (name in body && !isDeepStrictEqual(body[name], value)) {
      issues.push({ in: 'body', pointer: `/${name}`, detail: 'is read-only; send it back unchanged or leave it out' })
    }
  }
  return issues
}

/** The parent a related create's path names (`/v1/projects/3/tasks`: projectId 3). */
export interface PathParent { readonly foreignKey: string, readonly id: number }

/** A related create's body may repeat its path's parent (a record's body copied), never name another. */
export function pathParentIssues (body: Body, parent: PathParent | undefined): ProblemIssue[] {
  if (parent === undefined || !(parent.foreignKey in body) || body[parent.foreignKey] === parent.id) return []
  return [{ in: 'body', pointer: `/${parent.foreignKey}`, detail: `must be ${parent.id}, the id in the path, or be left out` }]
}

function isPlainObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** RFC 7396 applied to one value: objects merge member by member, `null` deletes, anything else replaces. */
export function mergePatch (target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else result[key] = mergePatch(result[key], value)
  }
  return result
}

/** Whether a merge patch merges an object into a field's stored value: a result its own schema never saw (merged-check.ts). */
export function mergesObjects (resource: Resource, patch: Body): boolean {
  for (const name of resource.fields.keys()) if (isPlainObject(patch[name])) return true
  return false
}

/**
 * The writable values after applying a merge patch to the stored record.
 * `null` removes an optional field and restores a defaulted one (the patch
 * schema already refused `null` for required fields).
 */
export function patchedValues (resource: Resource, current: StoredRecord, patch: Body): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  for (const field of resource.fields.values()) {
    const change = patch[field.name]
    const before = current.values[field.name]
    if (change === undefined) {
      if (before !== undefined) values[field.name] = before
    } else if (change === null) {
      if (field.hasDefault) values[field.name] = structuredClone(field.default)
    } else {
      values[field.name] = storedForm(field, mergePatch(before, change))
    }
  }
  return values
}
