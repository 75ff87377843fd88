// Frozen migration: imports nothing from the project.
import type { Kysely } from 'kysely'

/**
 * When the owner deleted a task's output through the API (OpenAI's `DELETE /v1/videos/{id}`),
 * in unix seconds; 0 while not deleted. The row stays: it is the task's billing record.
 */
export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('deleted_at', 'bigint', (c) => c.notNull().defaultTo(0)).execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('deleted_at').execute()
}
