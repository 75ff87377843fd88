import type { Caller } from '../relay/auth.js'
import { RelayError, RM } from '../relay/errors.js'
import type { RelayDeps } from '../relay/pipeline.js'
import type { RelayChannel } from '../relay/state.js'

/**
 * The channel an administrator pinned with `sk-KEY-CHANNELID`, checked as the relay checks it,
 * and also for speaking the task's protocol (a pinned channel is called without the failover's
 * type filter); undefined when the caller pinned none.
 */
export function pinnedTaskChannel (deps: RelayDeps, caller: Caller, accepts: (type: number) => boolean): RelayChannel | undefined {
  if (caller.pinnedChannel === undefined) return undefined
  const pinned = deps.state.channels.get(caller.pinnedChannel)
  if (pinned === undefined || !accepts(pinned.type)) throw new RelayError(400, 'invalid_request_error', 'invalid_channel', RM.invalidChannelId)
  if (pinned.status !== 1) throw new RelayError(403, 'invalid_request_error', 'channel_disabled', RM.channelDisabled)
  return pinned
}
