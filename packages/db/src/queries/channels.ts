import { type Expression, type Kysely, type SelectQueryBuilder, type SqlBool, sql, type Transaction } from 'kysely'
import type { Channel, ChannelUpdate, Database, NewChannel } from '../schema/index.js'
import { CHANNEL_STATUS, type ChannelStatus, LOG_TYPE } from '@modelgate/contracts'
import { insertLog } from './logs.js'

type Db = Kysely<Database> | Transaction<Database>

/** Channel columns a list may show: everything but the key. */
export const CHANNEL_PUBLIC_COLUMNS = [
  'id', 'type', 'name', 'openai_organization', 'max_input_tokens', 'base_url', 'other', 'models', 'group', 'model_mapping',
  'status_code_mapping', 'auto_ban', 'test_model', 'priority', 'weight', 'tag', 'proxy_url', 'setting', 'status',
  'response_time', 'test_time', 'balance', 'balance_updated_time', 'used_quota', 'created_time', 'other_info',
  'param_override', 'header_override', 'multi_key_mode', 'key_states'
] as const satisfies ReadonlyArray<keyof Channel>
export type PublicChannel = Pick<Channel, typeof CHANNEL_PUBLIC_COLUMNS[number]>

const nowSeconds = (): number => Math.floor(Date.now() / 1000)

/** The statuses the system moves a channel between on its own (an admin's disable stands). */
export type AutomaticChannelStatus = typeof CHANNEL_STATUS.enabled | typeof CHANNEL_STATUS.autoDisabled

/**
 * Rebuilds the routing index of `channelIds` from their rows: one ability per group x model of
 * the comma lists, enabled when the channel is (CHANNEL_STATUS.enabled), with the channel's priority, weight
 * and tag. Call it in the transaction that changed the channels, so the gateways never load a
 * channel and an index that disagree.
 */
export async function replaceAbilities (trx: Transaction<Database>, channelIds: readonly number[]): Promise<void> {
  if (channelIds.length === 0) return
  const ids = [...channelIds]
  // Row locks in id order serialise rebuilds of the same channel (the later one sees the earlier's rows).
  await trx.selectFrom('channels').select('id').where('id', 'in', ids).orderBy('id').forUpdate().execute()
  await trx.deleteFrom('abilities').where('channel_id', 'in', ids).execute()
  await sql`
    insert into abilities ("group", model, channel_id, enabled, priority, weight, tag)
    select distinct btrim(g.name), btrim(m.name), c.id, c.status = ${sql.lit(CHANNEL_STATUS.enabled)}, c.priority, c.weight, c.tag
    from channels c
    cross join lateral unnest(string_to_array(c."group", ',')) as g(name)
    cross join lateral unnest(string_to_array(c.models, ',')) as m(name)
    where c.id = any(${ids}::int[]) and btrim(g.name) <> '' and btrim(m.name) <> ''
  `.execute(trx)
}

/** Rebuilds the whole routing index from the channels (the console's "fix"). Returns the channel count. */
export async function rebuildAllAbilities (db: Kysely<Database>): Promise<number> {
  return await db.transaction().execute(async (trx) => {
    const rows = await trx.selectFrom('channels').select('id').orderBy('id').forUpdate().execute()
    // Everything goes, so rows no channel would produce any more (stale models) disappear too.
    await trx.deleteFrom('abilities').execute()
    await replaceAbilities(trx, rows.map((r) => r.id))
    return rows.length
  })
}

/** A channel with its sealed key. */
export async function findChannelById (db: Db, id: number): Promise<Channel | undefined> {
  return await db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Inserts channels and their abilities in one transaction; returns them without keys, in order. */
export async function insertChannels (db: Kysely<Database>, rows: NewChannel[]): Promise<PublicChannel[]> {
  return await db.transaction().execute(async (trx) => {
    const created = await trx.insertInto('channels').values(rows).returning(CHANNEL_PUBLIC_COLUMNS).execute()
    await replaceAbilities(trx, created.map((c) => c.id))
    return created.sort((a, b) => a.id - b.id)
  })
}

/**
 * Changes one channel and rebuilds its abilities in one transaction. With `statusReason`, the
 * reason and time go into other_info (an admin's status change). Undefined when it is gone.
 */
export async function updateChannel (db: Kysely<Database>, id: number, patch: ChannelUpdate, statusReason?: string): Promise<PublicChannel | undefined> {
  return await db.transaction().execute(async (trx) => {
    let q = trx.updateTable('channels').set(patch)
    if (statusReason !== undefined) q = q.set({ other_info: sql`other_info || ${JSON.stringify({ status_reason: statusReason, status_time: nowSeconds() })}::jsonb` })
    const row = await q.where('id', '=', id).returning(CHANNEL_PUBLIC_COLUMNS).executeTakeFirst()
    if (row === undefined) return undefined
    await replaceAbilities(trx, [id])
    return row
  })
}

/**
 * Changes every channel with `tag` and rebuilds their abilities in one transaction; returns the
 * ids changed (empty when no channel has the tag).
 */
export async function updateChannelsByTag (db: Kysely<Database>, tag: string, patch: ChannelUpdate, statusReason?: string): Promise<number[]> {
  return await db.transaction().execute(async (trx) => {
    // Locked in id order first, so two bulk edits of one tag cannot deadlock each other.
    const locked = await trx.selectFrom('channels').select('id').where('tag', '=', tag).orderBy('id').forUpdate().execute()
    if (locked.length === 0) return []
    let q = trx.updateTable('channels').set(patch)
    if (statusReason !== undefined) q = q.set({ other_info: sql`other_info || ${JSON.stringify({ status_reason: statusReason, status_time: nowSeconds() })}::jsonb` })
    const rows = await q.where('id', 'in', locked.map((r) => r.id)).returning('id').execute()
    const ids = rows.map((r) => r.id)
    await replaceAbilities(trx, ids)
    return ids
  })
}

/** Deletes a channel (its abilities go with it). False when it did not exist. */
export async function deleteChannel (db: Db, id: number): Promise<boolean> {
  const row = await db.deleteFrom('channels').where('id', '=', id).returning('id').executeTakeFirst()
  return row !== undefined
}

/** Deletes every disabled and auto-disabled channel; returns how many. */
export async function deleteDisabledChannels (db: Db): Promise<number> {
  const rows = await db.deleteFrom('channels').where('status', 'in', [CHANNEL_STATUS.disabled, CHANNEL_STATUS.autoDisabled]).returning('id').execute()
  return rows.length
}

/** Records a channel test's duration (ms) and time. */
export async function recordChannelTest (db: Db, id: number, responseMs: number): Promise<void> {
  await db.updateTable('channels').set({ response_time: Math.round(responseMs), test_time: nowSeconds() }).where('id', '=', id).execute()
}

/** Records a channel's balance (US dollars, from its provider's billing endpoint) and when it was read. */
export async function recordChannelBalance (db: Db, id: number, balance: number): Promise<void> {
  await db.updateTable('channels').set({ balance, balance_updated_time: nowSeconds() }).where('id', '=', id).execute()
}

/** Channels with one of `statuses`, keys included, by id. */
export async function findChannelsByStatus (db: Db, statuses: readonly ChannelStatus[]): Promise<Channel[]> {
  return await db.selectFrom('channels').selectAll().where('status', 'in', [...statuses]).orderBy('id').execute()
}

/** Every model name any channel lists, sorted, without duplicates. */
export async function findAllChannelModels (db: Db): Promise<string[]> {
  const { rows } = await sql<{ model: string }>`
    select distinct btrim(m.name) as model
    from channels c cross join lateral unnest(string_to_array(c.models, ',')) as m(name)
    where btrim(m.name) <> ''
    order by model
  `.execute(db)
  return rows.map((r) => r.model)
}

/** Ids and sealed keys of up to `limit` channels after `afterId`, by id (for key search). */
export async function findChannelKeysAfter (db: Db, afterId: number, limit: number): Promise<Array<Pick<Channel, 'id' | 'key'>>> {
  return await db.selectFrom('channels').select(['id', 'key']).where('id', '>', afterId).orderBy('id').limit(limit).execute()
}

/** Ids and sealed keys of the channels `ids` (to count the keys of a listed page). */
export async function findChannelKeysByIds (db: Db, ids: readonly number[]): Promise<Array<Pick<Channel, 'id' | 'key'>>> {
  if (ids.length === 0) return []
  return await db.selectFrom('channels').select(['id', 'key']).where('id', 'in', [...ids]).execute()
}

/** The whole rows of the channels `ids`, by id (for the audit trail's before and after). */
export async function findChannelsByIds (db: Db, ids: readonly number[]): Promise<Channel[]> {
  if (ids.length === 0) return []
  return await db.selectFrom('channels').selectAll().where('id', 'in', [...ids]).orderBy('id').execute()
}

/** The whole rows of the channels tagged `tag`, by id (for the audit trail's before). */
export async function findChannelsByTag (db: Db, tag: string): Promise<Channel[]> {
  return await db.selectFrom('channels').selectAll().where('tag', '=', tag).orderBy('id').execute()
}

/** Filters of {@link listChannels}; they combine with AND. */
export interface ChannelFilter {
  /** Matches a channel whose name contains `text` (case-insensitive) or whose id is in `ids`. */
  keyword?: { text: string, ids: number[] }
  /** An element of the channel's comma-separated groups. */
  group?: string
  /** An element of the channel's comma-separated models. */
  model?: string
}

export interface ChannelListQuery {
  filter: ChannelFilter
  /** Id descending instead of priority descending, then id descending. */
  idSort: boolean
  offset: number
  limit: number
}

/** One row of a list in tag mode: a tag with its channels, or an untagged channel. */
export type ChannelListRow = { tag: string, children: PublicChannel[] } | { tag: null, channel: PublicChannel }

const likeEscape = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`)

function filtered<O> (qb: SelectQueryBuilder<Database, 'channels', O>, f: ChannelFilter): SelectQueryBuilder<Database, 'channels', O> {
  const keyword = f.keyword
  if (keyword !== undefined) {
    qb = qb.where((eb) => {
      const terms: Array<Expression<SqlBool>> = [eb('name', 'ilike', `%${likeEscape(keyword.text)}%`)]
      if (keyword.ids.length > 0) terms.push(eb('id', 'in', keyword.ids))
      return eb.or(terms)
    })
  }
  if (f.group !== undefined) qb = qb.where(sql<SqlBool>`${f.group} = any(string_to_array("group", ','))`)
  if (f.model !== undefined) qb = qb.where(sql<SqlBool>`${f.model} = any(string_to_array(models, ','))`)
  return qb
}

/** A page of channels without keys: priority descending then id descending, or id descending. */
export async function listChannels (db: Db, q: ChannelListQuery): Promise<{ items: PublicChannel[], total: number }> {
  const base = filtered(db.selectFrom('channels'), q.filter)
  let page = base.select(CHANNEL_PUBLIC_COLUMNS)
  if (!q.idSort) page = page.orderBy('priority', 'desc')
  const [items, count] = await Promise.all([
    page.orderBy('id', 'desc').offset(q.offset).limit(q.limit).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  ])
  return { items, total: Number(count.n) }
}

/**
 * A page of list rows where the channels sharing a tag form one row (counted once in paging),
 * placed by their highest priority and newest id; untagged channels are rows of their own. A tag
 * row holds the channels of the tag that pass the filter.
 */
export async function listChannelsByTag (db: Db, q: ChannelListQuery): Promise<{ items: ChannelListRow[], total: number }> {
  // Tagged channels group by their tag; each untagged channel is a group by itself (its id).
  const single = sql<number | null>`case when tag is null then id end`
  let keys = filtered(db.selectFrom('channels'), q.filter)
    .select(['tag', single.as('channel_id')])
    .groupBy(['tag', single])
  if (!q.idSort) keys = keys.orderBy(sql`max(priority)`, 'desc')
  const [page, count] = await Promise.all([
    keys.orderBy(sql`max(id)`, 'desc').offset(q.offset).limit(q.limit).execute(),
    filtered(db.selectFrom('channels'), q.filter)
      .select(sql<string>`count(distinct tag) + count(*) filter (where tag is null)`.as('n'))
      .executeTakeFirstOrThrow()
  ])
  const tags = page.flatMap((r) => r.tag === null ? [] : [r.tag])
  const ids = page.flatMap((r) => r.channel_id === null ? [] : [r.channel_id])
  let members = filtered(db.selectFrom('channels'), q.filter).select(CHANNEL_PUBLIC_COLUMNS)
    .where((eb) => eb.or([
      ...(tags.length > 0 ? [eb('tag', 'in', tags)] : []),
      ...(ids.length > 0 ? [eb('id', 'in', ids)] : [])
    ]))
  if (!q.idSort) members = members.orderBy('priority', 'desc')
  const channels = page.length === 0 ? [] : await members.orderBy('id', 'desc').execute()
  const items = page.map((r): ChannelListRow => {
    if (r.tag !== null) {
      const tag = r.tag
      return { tag, children: channels.filter((c) => c.tag === tag) }
    }
    const channel = channels.find((c) => c.id === r.channel_id)
    if (channel === undefined) throw new Error(`channel ${String(r.channel_id)} vanished while listing`)
    return { tag: null, channel }
  })
  return { items, total: Number(count.n) }
}

/**
 * Moves a channel between enabled and auto-disabled on the system's own judgement: only
 * from `from` (a change an admin made meanwhile wins), with the reason and time in other_info,
 * the routing index following, and a system log. Returns false when the channel was not in `from`.
 */
export async function setChannelStatusAutomatically (
  db: Kysely<Database>,
  change: { id: number, from: ChannelStatus, to: AutomaticChannelStatus, reason: string }
): Promise<boolean> {
  const now = nowSeconds()
  return await db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('channels')
      .set({ status: change.to, other_info: sql`other_info || ${JSON.stringify({ status_reason: change.reason, status_time: now })}::jsonb` })
      .where('id', '=', change.id).where('status', '=', change.from)
      .returning('name').executeTakeFirst()
    if (row === undefined) return false
    await trx.updateTable('abilities').set({ enabled: change.to === CHANNEL_STATUS.enabled }).where('channel_id', '=', change.id).execute()
    await insertLog(trx, {
      type: LOG_TYPE.system,
      channel_id: change.id,
      content: `channel ${row.name} (#${change.id}) ${change.to === CHANNEL_STATUS.enabled ? 're-enabled' : 'auto-disabled'}: ${change.reason}`
    })
    return true
  })
}

/**
 * Moves one key of a multi-key channel (named by its fingerprint) to `to`, only from one of
 * `from` (a key without a state counts as enabled), in one statement, with the reason and
 * time; `lastError` also records the error seen with the key. Returns false when the key was
 * not in `from`.
 */
export async function setChannelKeyStatus (
  db: Db,
  change: { id: number, fingerprint: string, from: readonly ChannelStatus[], to: ChannelStatus, reason: string, lastError?: string }
): Promise<boolean> {
  const now = nowSeconds()
  const patch: Record<string, unknown> = { status: change.to, reason: change.reason, time: now }
  if (change.lastError !== undefined) {
    patch['last_error'] = change.lastError
    patch['last_error_time'] = now
  }
  const row = await db.updateTable('channels')
    .set({ key_states: sql`jsonb_set(key_states, array[${change.fingerprint}], coalesce(key_states -> ${change.fingerprint}, '{}'::jsonb) || ${JSON.stringify(patch)}::jsonb)` })
    .where('id', '=', change.id)
    .where(sql<SqlBool>`coalesce((key_states -> ${change.fingerprint} ->> 'status')::int, ${sql.lit(CHANNEL_STATUS.enabled)}) = any(${[...change.from]}::int[])`)
    .returning('id').executeTakeFirst()
  return row !== undefined
}

/** Records the last upstream error seen with one key of a channel, leaving its status as it is. */
export async function recordChannelKeyError (db: Db, id: number, fingerprint: string, message: string): Promise<void> {
  const patch = JSON.stringify({ last_error: message, last_error_time: nowSeconds() })
  const enabled = JSON.stringify({ status: CHANNEL_STATUS.enabled })
  await db.updateTable('channels')
    .set({ key_states: sql`jsonb_set(key_states, array[${fingerprint}], coalesce(key_states -> ${fingerprint}, ${enabled}::jsonb) || ${patch}::jsonb)` })
    .where('id', '=', id).execute()
}

/**
 * Drops the key states of a channel whose fingerprints are not in `fingerprints` (its key list
 * changed), in one statement so a state written meanwhile for a kept key survives. Returns the
 * states left, undefined when the channel is gone.
 */
export async function pruneChannelKeyStates (db: Db, id: number, fingerprints: readonly string[]): Promise<Channel['key_states'] | undefined> {
  const row = await db.updateTable('channels')
    .set({ key_states: sql`coalesce((select jsonb_object_agg(e.key, e.value) from jsonb_each(key_states) as e where e.key = any(${[...fingerprints]}::text[])), '{}'::jsonb)` })
    .where('id', '=', id)
    .returning('key_states').executeTakeFirst()
  return row?.key_states
}

/**
 * Replaces a channel's credentials with renewed ones (OAuth tokens a provider rotated), in one
 * statement and only while the key and setting are still `from` (an admin's edit meanwhile wins):
 * `key` sealed, `setting` as JSON text, either absent when it stays. A key state follows its key
 * to the new fingerprint (`moved`: [old, new] pairs). False when the row changed or is gone.
 */
export async function replaceChannelCredentials (
  db: Db,
  change: { id: number, from: Pick<Channel, 'key' | 'setting'>, key?: string, setting?: string, moved?: ReadonlyArray<readonly [string, string]> }
): Promise<boolean> {
  let states = sql<Channel['key_states']>`key_states`
  for (const [from, to] of change.moved ?? []) {
    states = sql<Channel['key_states']>`(case when ${states} -> ${from}::text is null then ${states} else (${states} - ${from}::text) || jsonb_build_object(${to}::text, ${states} -> ${from}::text) end)`
  }
  const row = await db.updateTable('channels')
    .set({
      ...(change.key === undefined ? {} : { key: change.key }),
      ...(change.setting === undefined ? {} : { setting: change.setting }),
      ...(change.moved === undefined || change.moved.length === 0 ? {} : { key_states: states })
    })
    .where('id', '=', change.id).where('key', '=', change.from.key).where('setting', '=', change.from.setting)
    .returning('id').executeTakeFirst()
  return row !== undefined
}
