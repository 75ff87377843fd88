// Frozen migration: imports nothing from the project.
//
// logs is range-partitioned by created_at (unix seconds), one partition per UTC month, plus a
// default partition for rows outside every month that exists. Why: the console always filters by
// a time range, so queries prune to a month or two; retention drops whole partitions instead of
// deleting tens of millions of rows; each partition's indexes stay small enough to be cached.
// See ARCHITECTURE.md, "The logs table".
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await sql`
    create table logs (
      id bigserial not null,
      created_at bigint not null,
      type smallint not null default 0,
      user_id integer not null default 0,
      username text not null default '',
      token_id integer not null default 0,
      token_name text not null default '',
      model_name text not null default '',
      channel_id integer not null default 0,
      "group" text not null default '',
      quota bigint not null default 0,
      prompt_tokens integer not null default 0,
      completion_tokens integer not null default 0,
      use_time integer not null default 0,
      is_stream boolean not null default false,
      ip text not null default '',
      request_id text,
      content text not null default '',
      other jsonb,
      primary key (id, created_at)
    ) partition by range (created_at)
  `.execute(db)
  await sql`create table logs_default partition of logs default`.execute(db)

  // Every console filter is "X within a time range, newest first": one (X, created_at) index each.
  await sql`create index logs_created on logs (created_at desc)`.execute(db)
  await sql`create index logs_user_created on logs (user_id, created_at desc)`.execute(db)
  await sql`create index logs_token_name_created on logs (token_name, created_at desc)`.execute(db)
  await sql`create index logs_model_created on logs (model_name, created_at desc)`.execute(db)
  await sql`create index logs_channel_created on logs (channel_id, created_at desc)`.execute(db)
  await sql`create index logs_type_created on logs (type, created_at desc)`.execute(db)
  // Settlement idempotency key: a usage event carries its request id and its request time.
  await sql`create unique index logs_request on logs (request_id, created_at) where request_id is not null`.execute(db)

  // Creates the partition for the UTC month holding `month_of`, moving any rows of that month out
  // of the default partition first. Serialised by an advisory lock so replicas can call it freely.
  await sql`
    create function logs_ensure_partition(month_of timestamptz) returns boolean
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
      execute format('create table %I (like logs including defaults including constraints)', part);
      execute format(
        'with moved as (delete from logs_default where created_at >= %s and created_at < %s returning *) insert into %I select * from moved',
        lo, hi, part);
      execute format('alter table logs attach partition %I for values from (%s) to (%s)', part, lo, hi);
      return true;
    end
    $fn$
  `.execute(db)
  await sql`select logs_ensure_partition(now() + make_interval(months => m)) from generate_series(-1, 2) as m`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await sql`drop function logs_ensure_partition(timestamptz)`.execute(db)
  await sql`drop table logs`.execute(db)
}
