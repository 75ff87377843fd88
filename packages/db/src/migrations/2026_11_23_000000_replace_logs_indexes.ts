// Frozen migration: imports nothing from the project.
//
// The console pages logs by `created_at desc, id desc`. The (X, created_at desc) indexes gave the
// first key only, so every page sorted a whole second's rows by id: a burst of 100 000 rows
// settled in one second made the first page read all of them. Each index now ends in id, which
// also lets a page's keys come from an index-only scan. They are ascending and read backwards:
// rows arrive in created_at order, and a descending (created_at) index takes every row at its
// left edge, where pages split in half and stay half empty (nearly twice the size of the
// ascending one, which fills its right edge). The old indexes are dropped, so an insert maintains
// as many indexes as before. Building the new ones blocks log inserts meanwhile (the billing
// worker's settlements wait): about 1.5 minutes for 10 million rows on the bench host.
//
// The counts are index-only scans, which read the heap for every row not yet marked all-visible
// by a vacuum. Insert-driven autovacuum waits for 20% of a partition by default, up to a couple of
// million rows of the current month, exactly the rows the console asks about; each partition now
// asks for a vacuum after 10 000 inserts. Partitioned tables take no storage parameters, so they
// are set on each partition, and logs_ensure_partition sets them on the months it creates.
import { type Kysely, sql } from 'kysely'

const INDEXES = [
  ['logs_created', 'logs_created_id', ''],
  ['logs_user_created', 'logs_user_created_id', 'user_id'],
  ['logs_token_name_created', 'logs_token_name_created_id', 'token_name'],
  ['logs_model_created', 'logs_model_created_id', 'model_name'],
  ['logs_channel_created', 'logs_channel_created_id', 'channel_id'],
  ['logs_type_created', 'logs_type_created_id', 'type']
] as const

const VACUUM_OPTIONS = 'autovacuum_vacuum_insert_threshold = 10000, autovacuum_vacuum_insert_scale_factor = 0'

function ensurePartition (withOptions: string): string {
  return `
    create or replace function logs_ensure_partition(month_of timestamptz) returns boolean
    language plpgsql as $fn$
    declare
      month_start timestamp := date_trunc('month', month_of at time zone 'UTC');
      lo bigint := extract(epoch from month_start at time zone 'UTC')::bigint;
      hi bigint := extract(epoch from (month_start + interval '1 month') at time zone 'UTC')::bigint;
      part text := 'logs_' || to_char(month_start, 'YYYYMM');
    begin
      perform pg_advisory_xact_lock(hashtext('logs_ensure_partition'));
      if to_regclass(part) is not null then
        return false;
      end if;
      execute format('create table %I (like logs including defaults including constraints)${withOptions}', part);
      execute format(
        'with moved as (delete from logs_default where created_at >= %s and created_at < %s returning *) insert into %I select * from moved',
        lo, hi, part);
      execute format('alter table logs attach partition %I for values from (%s) to (%s)', part, lo, hi);
      return true;
    end
    $fn$
  `
}

async function setPartitionOptions (db: Kysely<any>, clause: string): Promise<void> {
  await sql`
    do $do$
    declare part regclass;
    begin
      for part in select inhrelid::regclass from pg_inherits where inhparent = 'logs'::regclass loop
        execute format('alter table %s ${sql.raw(clause)}', part);
      end loop;
    end
    $do$
  `.execute(db)
}

export async function up (db: Kysely<any>): Promise<void> {
  for (const [, name, column] of INDEXES) {
    const key = column === '' ? 'created_at, id' : `"${column}", created_at, id`
    await sql`create index ${sql.id(name)} on logs (${sql.raw(key)})`.execute(db)
  }
  for (const [old] of INDEXES) await sql`drop index ${sql.id(old)}`.execute(db)
  await setPartitionOptions(db, `set (${VACUUM_OPTIONS})`)
  await sql.raw(ensurePartition(` with (${VACUUM_OPTIONS})`)).execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await sql.raw(ensurePartition('')).execute(db)
  await setPartitionOptions(db, 'reset (autovacuum_vacuum_insert_threshold, autovacuum_vacuum_insert_scale_factor)')
  for (const [old, name, column] of INDEXES) {
    const key = column === '' ? 'created_at desc' : `"${column}", created_at desc`
    await sql`create index ${sql.id(old)} on logs (${sql.raw(key)})`.execute(db)
    await sql`drop index ${sql.id(name)}`.execute(db)
  }
}
