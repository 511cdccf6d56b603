/**
 * A webhook subscription to every event, added as another process would add
 * it: past the service, straight into the database.
 */
import { WEBHOOKS_TABLE } from '../../src/store/webhook-tables.js'
import type { OtherConnection } from './other-connection.js'

export async function addActiveSubscription (other: OtherConnection): Promise<void> {
  await other.run(`insert into ${WEBHOOKS_TABLE} (url, events, secret, "createdAt") values ('https://hooks.example.com/in', '["*"]', 'whsec_x', '2026-01-01T00:00:00.000Z')`)
}
