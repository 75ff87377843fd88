import type { FastifyInstance } from 'fastify'
import type { CallerCache } from '../relay/callers.js'
import type { RelayDeps } from '../relay/pipeline.js'
import { midjourneyRoutes } from './midjourney.js'
import { sunoRoutes } from './suno.js'
import { videoRoutes } from './video.js'

/** What the task routes need: the relay's dependencies and the caller cache (relay keys). */
export interface TaskDeps extends RelayDeps {
  callers: CallerCache
}

/**
 * Asynchronous tasks (issue 19): Midjourney-Proxy (/mj and /{mode}/mj), Suno (/suno) and OpenAI's
 * video API (/v1/videos). Each protocol answers in its own shape; all submit through submitTask
 * and are polled, billed and refunded by the billing worker.
 */
export async function taskRoutes (api: FastifyInstance, deps: TaskDeps): Promise<void> {
  await midjourneyRoutes(api, deps)
  await sunoRoutes(api, deps)
  await videoRoutes(api, deps)
}
