import { CHANNEL_STATUS } from '@modelgate/contracts'
import { type Channel, findChannelById, findChannelsByStatus, recordChannelBalance } from '@modelgate/db'
import { balanceSupported, type ChannelBalance, type ChannelConfig, queryBalance } from '@modelgate/providers'
import { channelConfigOf, firstUsableKey } from '@modelgate/service'
import { fail } from '../lib/errors.js'
import { CM } from '../lib/channel-messages.js'
import type { Deps } from './deps.js'

const BALANCE_TIMEOUT_MS = 20_000
/** Channels queried at once by an update of all balances. */
const BALANCE_PARALLEL = 4

/** The channel as the balance query needs it, with its first usable key. */
function balanceConfig ({ secrets, outbound }: Deps<'secrets' | 'outbound'>, row: Channel): ChannelConfig {
  let key: string
  try {
    key = firstUsableKey(row, secrets)
  } catch {
    throw fail(CM.sealedKey)
  }
  return channelConfigOf(row, key, { outbound })
}

/** Reads one channel's balance from its provider and, when it came, stores it. */
async function refreshBalance (deps: Deps<'db' | 'secrets' | 'outbound'>, row: Channel): Promise<ChannelBalance> {
  if (!balanceSupported(row.type)) return { status: 'unsupported' }
  const answer = await queryBalance(balanceConfig(deps, row), BALANCE_TIMEOUT_MS)
  if (answer.status === 'ok') await recordChannelBalance(deps.db, row.id, answer.usd)
  return answer
}

/**
 * `GET /api/channel/update_balance/{id}`: the channel's balance in US dollars, read now and
 * stored with its time. A failure leaves the stored balance as it was.
 */
export async function updateChannelBalance (deps: Deps<'db' | 'secrets' | 'outbound'>, id: number): Promise<number> {
  const row = await findChannelById(deps.db, id)
  if (row === undefined) throw fail(CM.channelNotFound)
  const answer = await refreshBalance(deps, row)
  if (answer.status === 'unsupported') throw fail(CM.balanceUnsupported, { type: row.type })
  if (answer.status === 'failed') throw fail(CM.balanceFailed, { name: row.name, reason: answer.message })
  return answer.usd
}

/**
 * `GET /api/channel/update_balance`: the balance of every enabled channel whose type has a
 * billing endpoint, {@link BALANCE_PARALLEL} at a time; one channel's failure (logged) does not
 * stop the others.
 */
export async function updateAllChannelBalances (deps: Deps<'db' | 'secrets' | 'outbound' | 'log'>): Promise<{ updated: number, failed: number }> {
  const channels = (await findChannelsByStatus(deps.db, [CHANNEL_STATUS.enabled])).filter((c) => balanceSupported(c.type))
  const result = { updated: 0, failed: 0 }
  const queue = [...channels]
  const worker = async () => {
    for (let row = queue.shift(); row !== undefined; row = queue.shift()) {
      let answer: ChannelBalance
      try {
        answer = await refreshBalance(deps, row)
      } catch (err) {
        // A key CRYPTO_SECRET cannot open, or the database failing for this one row.
        answer = { status: 'failed', message: (err as Error).message }
      }
      if (answer.status === 'ok') {
        result.updated++
      } else {
        result.failed++
        deps.log.warn({ channelId: row.id, reason: answer.status === 'failed' ? answer.message : 'unsupported' }, 'channel balance not updated')
      }
    }
  }
  await Promise.all(Array.from({ length: BALANCE_PARALLEL }, worker))
  return result
}
