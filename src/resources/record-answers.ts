/**
 * What a GET of one record answers, made once per record object in a turn of
 * the event loop: its ETag, Last-Modified and serialised body. The requests
 * of one turn that read the same record are given the same object
 * (snapshot-memo.ts on SQLite, id-batches.ts on PostgreSQL), so under load
 * the 25-odd GETs a turn serves of a popular record build its
 * representation, its links and its JSON once between them: a GET one's CPU
 * fell to 0.92 of what it was (bench:ab, 10 pairs 0.86–0.99).
 *
 * Held for the turn only (turn-memo.ts), as the records are shared for a
 * turn only.
 */
import type { FastifyReply } from 'fastify'
import { formatEntityTag, httpDate, recordTag, type EntityTag } from '../http/conditional.js'
import { JSON_MEDIA_TYPE } from '../http/json-body.js'
import type { StoredRecord } from '../store/store.js'
import { turnMemo } from '../turn-memo.js'
import { represent } from './links.js'
import type { Resource } from './model.js'

export interface RecordAnswer {
  readonly tag: EntityTag
  /** The tag as the ETag header gives it. */
  readonly etag: string
  readonly lastModified: string
  /** The 200's body, serialised by the route's own serializer for `reply`: the first GET that needs it makes it. */
  body (reply: FastifyReply): string
}

const answers = turnMemo<StoredRecord, RecordAnswer>()

/** The answer for `record` of `resource`, whose records' ETags begin with `epoch`. */
export function recordAnswer (resource: Resource, epoch: string, record: StoredRecord): RecordAnswer {
  return answers(record, () => {
    const tag = recordTag(epoch, record.id, record.version)
    let body: string | undefined
    return {
      tag,
      etag: formatEntityTag(tag),
      lastModified: httpDate(record.updatedAt),
      body: reply => (body ??= reply.serializeInput(represent(resource, record), '200', JSON_MEDIA_TYPE) as string)
    }
  })
}
