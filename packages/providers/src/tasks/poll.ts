import type { ChannelConfig } from '../core/adaptor.js'
import { call } from '../net/probe.js'
import type { TaskPollProtocol, TaskReport } from './types.js'

/** Largest poll answer read (a batch of task records with their URLs). */
const MAX_POLL_ANSWER = 16 * 1024 * 1024

/**
 * Asks `channel` about `upstreamIds` in the protocol's batches, through the channel's proxy and the
 * service's outbound guard. A request that fails or is refused only loses its own tasks' reports
 * for this round (they are asked again next round); the others come back.
 */
export async function pollTasks (protocol: TaskPollProtocol, channel: ChannelConfig, upstreamIds: readonly string[], timeoutMs: number): Promise<{ reports: TaskReport[], failures: string[] }> {
  const reports: TaskReport[] = []
  const failures: string[] = []
  for (let i = 0; i < upstreamIds.length; i += protocol.batch) {
    const ids = upstreamIds.slice(i, i + protocol.batch)
    for (const req of protocol.pollRequests(channel, ids)) {
      try {
        const res = await call(req, { proxyUrl: channel.proxyUrl, outbound: channel.outbound }, timeoutMs, MAX_POLL_ANSWER)
        if (res.status < 200 || res.status >= 300) {
          failures.push(`HTTP ${res.status}`)
          continue
        }
        reports.push(...protocol.readPoll(res.status, res.body, ids))
      } catch (err) {
        failures.push((err as Error).message)
      }
    }
  }
  return { reports, failures }
}
