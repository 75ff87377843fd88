import { type Kysely, sql } from 'kysely'
import type { Database } from '../schema/index.js'
import { insertLog, LOG_TYPE } from './logs.js'

/**
 * Moves a channel between enabled (1) and auto-disabled (3) on the system's own judgement: only
 * from `from` (a change an admin made meanwhile wins), with the reason and time in other_info,
 * the routing index following, and a system log. Returns false when the channel was not in `from`.
 */
export async function setChannelStatusAutomatically (
  db: Kysely<Database>,
  change: { id: number, from: number, to: 1 | 3, reason: string }
): Promise<boolean> {
  const now = Math.floor(Date.now() / 1000)
  return await db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('channels')
      .set({ status: change.to, other_info: sql`other_info || ${JSON.stringify({ status_reason: change.reason, status_time: now })}::jsonb` })
      .where('id', '=', change.id).where('status', '=', change.from)
      .returning('name').executeTakeFirst()
    if (row === undefined) return false
    await trx.updateTable('abilities').set({ enabled: change.to === 1 }).where('channel_id', '=', change.id).execute()
    await insertLog(trx, {
      type: LOG_TYPE.system,
      channel_id: change.id,
      content: `channel ${row.name} (#${change.id}) ${change.to === 1 ? 're-enabled' : 'auto-disabled'}: ${change.reason}`
    })
    return true
  })
}
