/**
 * Tests channels in the background when AutomaticDisableChannelEnabled or
 * AutomaticEnableChannelEnabled is on: enabled channels that fail or answer slower than
 * ChannelDisableThreshold seconds are auto-disabled (auto_ban channels only); auto-disabled ones
 * that pass are re-enabled. Channels an admin disabled are never touched.
 */
export const channelTestsJob = {
  queue: 'maintenance',
  name: 'channel-tests',
  attempts: 1,
  backoff: { type: 'fixed', delay: 60_000 },
  /** Channels tested at once. */
  parallel: 4
} as const
