import { loadBillingWorkerConfig } from '@modelgate/config'
import { listLogPartitions, sql } from '@modelgate/db'
import { createServiceEnv } from '@modelgate/testing'
import type { Job } from 'bullmq'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import billingWorker from '../src/app.js'
import { run as runLogPartitions } from '../src/jobs/log-partitions/handler.js'

async function build (t: Test, env: Record<string, string>) {
  const app = Fastify()
  await app.register(billingWorker, { config: loadBillingWorkerConfig(env) })
  t.teardown(() => app.close())
  return app
}

function monthName (d: Date): string {
  return `logs_${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`
}

t.test('schedules the logs partition job and runs it at start', async (t) => {
  const env = await createServiceEnv(t)
  const app = await build(t, env)
  await app.after()
  // Simulate a month boundary approaching: next month's partition is missing.
  const next = new Date()
  next.setUTCDate(1)
  next.setUTCMonth(next.getUTCMonth() + 1)
  await sql`drop table ${sql.table(monthName(next))}`.execute(app.db)
  await sql`alter table audit_logs detach partition ${sql.table(`audit_${monthName(next)}`)}`.execute(app.db)
  await sql`drop table ${sql.table(`audit_${monthName(next)}`)}`.execute(app.db)
  const done = new Promise<unknown>((resolve) => {
    app.maintenance.worker.on('completed', (job: Job, result: unknown) => { if (job.name === 'log-partitions') resolve(result) })
  })
  await app.ready()
  t.same(await done, { created: 1, audit: 1 }, 'the scheduled run recreated the missing partitions (logs and audit_logs)')
  t.ok((await listLogPartitions(app.db)).some((p) => p.name === monthName(next)))
  const schedulers = await app.maintenance.queue.getJobSchedulers()
  t.same(schedulers.map((s) => s.key).sort(), ['channel-tests', 'log-partitions', 'log-retention', 'prune-settlements', 'reconcile-balances', 'subscription-periods'], 'one scheduler per job, however many replicas registered them')
  t.equal(schedulers.find((s) => s.key === 'log-partitions')?.every, 6 * 60 * 60 * 1000)
})

t.test('the log partitions handler is idempotent', async (t) => {
  const env = await createServiceEnv(t)
  const app = await build(t, env)
  await app.ready()
  const now = () => new Date(Date.UTC(2030, 0, 15))
  t.same(await runLogPartitions({ id: '1' }, { db: app.db, now }), { created: 4, audit: 4 }, 'Dec 2029 through Mar 2030, for logs and audit_logs')
  t.same(await runLogPartitions({ id: '1' }, { db: app.db, now }), { created: 0, audit: 0 }, 'a redelivered job changes nothing')
})

t.test('readiness includes the workers', async (t) => {
  const app = await build(t, await createServiceEnv(t))
  await app.ready()
  const res = await app.inject('/readyz')
  t.equal(res.statusCode, 200)
  t.same(res.json().checks.workers, { ok: true })
  await app.maintenance.worker.close()
  const after = await app.inject('/readyz')
  t.equal(after.statusCode, 503)
  t.equal(after.json().checks.workers.ok, false)
})

t.test('log retention removes what is older than LogRetentionDays, and nothing while it is 0', async (t) => {
  const { run: retention } = await import('../src/jobs/log-retention/handler.js')
  const { OptionValues } = await import('@modelgate/contracts')
  const app = await build(t, await createServiceEnv(t))
  await app.ready()
  const now = Math.floor(Date.now() / 1000)
  await app.db.insertInto('logs').values([
    { created_at: now - 40 * 86_400, quota: 1 }, { created_at: now - 31 * 86_400, quota: 2 }, { created_at: now - 5 * 86_400, quota: 3 }, { created_at: now, quota: 4 }
  ]).execute()
  const days = (d: string) => async () => new OptionValues(new Map([['LogRetentionDays', d]]))
  t.same(await retention({ db: app.db, options: days('0') }), { removed: 0, auditRemoved: 0 })
  t.same(await retention({ db: app.db, options: days('30'), now: () => now }), { removed: 2, auditRemoved: 0 })
  const left = await app.db.selectFrom('logs').select('quota').orderBy('quota').execute()
  t.same(left.map((l) => l.quota), [3, 4])
})

t.test('audit retention drops whole months older than AuditLogRetentionDays, never single entries', async (t) => {
  const { run: retention } = await import('../src/jobs/log-retention/handler.js')
  const { OptionValues } = await import('@modelgate/contracts')
  const app = await build(t, await createServiceEnv(t))
  await app.ready()
  const month = (y: number, m: number, d = 1) => Date.UTC(y, m, d) / 1000
  await runLogPartitions({ id: '1' }, { db: app.db, now: () => new Date(Date.UTC(2031, 1, 15)) })
  const entry = (created_at: number, note: string) => ({ created_at, actor_id: 1, actor_name: 'root', actor_role: 100, action: 'option.update', target_type: 'option', note })
  await app.db.insertInto('audit_logs').values([
    entry(month(2031, 0, 3), 'january'), entry(month(2031, 0, 30), 'late january'), entry(month(2031, 1, 10), 'february'), entry(month(2031, 2, 2), 'march')
  ]).execute()
  const notes = async () => (await app.db.selectFrom('audit_logs').select('note').orderBy('created_at').execute()).map((r) => r.note)
  const days = (audit: string) => async () => new OptionValues(new Map([['AuditLogRetentionDays', audit]]))
  // 20 Feb 2031 minus 10 days is 10 Feb: January ended before it, February did not.
  const now = () => month(2031, 1, 20)
  t.same(await retention({ db: app.db, options: days('0'), now }), { removed: 0, auditRemoved: 0 }, '0 keeps everything')
  t.same(await retention({ db: app.db, options: days('10'), now }), { removed: 0, auditRemoved: 2 }, 'January goes whole')
  t.same(await notes(), ['february', 'march'], 'the month holding the cut-off stays whole')
  t.same(await retention({ db: app.db, options: async () => new OptionValues(new Map()), now }), { removed: 0, auditRemoved: 0 }, 'the default keeps 365 days')
  await t.rejects(app.db.deleteFrom('audit_logs').where('note', '=', 'february').execute(), /append-only/, 'single entries cannot be deleted')
  await t.rejects(app.db.updateTable('audit_logs').set({ note: 'x' }).execute(), /append-only/, 'nor changed')
})
