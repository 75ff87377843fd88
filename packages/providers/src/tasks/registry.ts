import { midjourneyPoll } from './midjourney.js'
import { sunoPoll } from './suno.js'
import type { TaskPollProtocol } from './types.js'
import { videoPoll } from './video.js'

/** Every task protocol the billing worker polls. */
export const TASK_POLL_PROTOCOLS: readonly TaskPollProtocol[] = [midjourneyPoll, sunoPoll, videoPoll]
