// Frozen migration: imports nothing from the project.
//
// audit_logs: one row per admin or root action that changed something (channels, users, tokens,
// redemption codes, options). Partitioned by month on created_at exactly like logs (see
// 2026_11_22_000100_create_logs and ARCHITECTURE.md, "The logs table"), so retention drops whole
// months. Append-only: a row trigger refuses every update and every delete; the only way rows
// leave is a month's partition being detached and dropped, and the one delete the partition
// function makes (moving rows out of the default partition) announces itself with a
// transaction-local setting.
import { type Kysely, sql } from 'kysely'

const VACUUM_OPTIONS = 'autovacuum_vacuum_insert_threshold = 10000, autovacuum_vacuum_insert_scale_factor = 0'

export async function up (db: Kysely<any>): Promise<void> {
  await sql`
    create table audit_logs (
      id bigserial not null,
      created_at bigint not null,
      actor_id integer not null,
      actor_name text not null,
      actor_role integer not null,
      ip text not null default '',
      action text not null,
      target_type text not null,
      target_id text not null default '',
      changes jsonb not null default '{}'::jsonb,
      note text not null default '',
      primary key (id, created_at)
    ) partition by range (created_at)
  `.execute(db)
  await sql.raw(`create table audit_logs_default partition of audit_logs default with (${VACUUM_OPTIONS})`).execute(db)

  // The console's filters, each within a time range, newest first (read backwards).
  await sql`create index audit_logs_created_id on audit_logs (created_at, id)`.execute(db)
  await sql`create index audit_logs_actor_created_id on audit_logs (actor_name, created_at, id)`.execute(db)
  await sql`create index audit_logs_action_created_id on audit_logs (action, created_at, id)`.execute(db)
  await sql`create index audit_logs_target_created_id on audit_logs (target_type, target_id, created_at, id)`.execute(db)

  await sql`
    create function audit_logs_refuse_change() returns trigger
    language plpgsql as $fn$
    begin
      if tg_op = 'DELETE' and current_setting('modelgate.audit_logs_move', true) = 'on' then
        return old;
      end if;
      raise exception 'audit_logs is append-only: % refused', lower(tg_op) using errcode = 'insufficient_privilege';
    end
    $fn$
  `.execute(db)
  await sql`
    create trigger audit_logs_append_only before update or delete on audit_logs
    for each row execute function audit_logs_refuse_change()
  `.execute(db)

  await sql.raw(`
    create function audit_logs_ensure_partition(month_of timestamptz) returns boolean
    language plpgsql as $fn$
    declare
      month_start timestamp := date_trunc('month', month_of at time zone 'UTC');
      lo bigint := extract(epoch from month_start at time zone 'UTC')::bigint;
      hi bigint := extract(epoch from (month_start + interval '1 month') at time zone 'UTC')::bigint;
      part text := 'audit_logs_' || to_char(month_start, 'YYYYMM');
    begin
      perform pg_advisory_xact_lock(hashtext('audit_logs_ensure_partition'));
      if to_regclass(part) is not null then
        return false;
      end if;
      execute format('create table %I (like audit_logs including defaults including constraints) with (${VACUUM_OPTIONS})', part);
      perform set_config('modelgate.audit_logs_move', 'on', true);
      execute format(
        'with moved as (delete from audit_logs_default where created_at >= %s and created_at < %s returning *) insert into %I select * from moved',
        lo, hi, part);
      perform set_config('modelgate.audit_logs_move', 'off', true);
      execute format('alter table audit_logs attach partition %I for values from (%s) to (%s)', part, lo, hi);
      return true;
    end
    $fn$
  `).execute(db)
  await sql`select audit_logs_ensure_partition(now() + make_interval(months => m)) from generate_series(-1, 2) as m`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await sql`drop function audit_logs_ensure_partition(timestamptz)`.execute(db)
  await sql`drop table audit_logs`.execute(db)
  await sql`drop function audit_logs_refuse_change()`.execute(db)
}
