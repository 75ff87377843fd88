import type { TaskPollProtocol } from './types.js'

/** Every task protocol the billing worker polls. */
export const TASK_POLL_PROTOCOLS: readonly TaskPollProtocol[] = []
