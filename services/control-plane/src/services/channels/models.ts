import type { FetchModelsBody } from '@modelgate/contracts'
import { adaptorFor, type ChannelConfig, fetchModels } from '@modelgate/providers'
import { channelKeys, parseJsonObject } from '@modelgate/service'
import { CM } from '../../lib/channel-messages.js'
import { fail } from '../../lib/errors.js'
import type { Deps } from '../deps.js'
import { type CredentialDeps, credentialStore } from './credentials.js'
import { channelOrFail } from './listing.js'
import { checkProxyUrl, checkTargets, checkType, keyLines, normalizeBaseUrl, OTHER_DEFAULTS } from './validation.js'

// Upstream model lists, of a saved channel or of settings not saved yet.

const FETCH_MODELS_TIMEOUT_MS = 20_000

function probeConfig (id: number, type: number, key: string, baseUrl: string, other: string, organization: string | null, setting: string, proxyUrl: string): ChannelConfig {
  return { id, type, key, baseUrl, other, organization, setting: parseJsonObject(setting), proxyUrl }
}

async function listUpstreamModels (type: number, config: ChannelConfig): Promise<string[]> {
  const adaptor = adaptorFor(type)
  if (adaptor === undefined) throw fail(CM.noAdaptor, { type })
  let models: string[] | undefined
  try {
    models = await fetchModels(adaptor, config, FETCH_MODELS_TIMEOUT_MS)
  } catch (err) {
    throw fail(CM.fetchModelsFailed, { reason: (err as Error).message })
  }
  if (models === undefined) throw fail(CM.fetchModelsUnsupported)
  return models
}

/** `GET /api/channel/fetch_models/{id}`: the saved channel's upstream model list. */
export async function fetchSavedChannelModels (deps: CredentialDeps & Deps<'outbound'>, id: number): Promise<string[]> {
  const row = await channelOrFail(deps, id)
  let key: string
  try {
    key = channelKeys(row, deps.secrets)[0] ?? ''
  } catch {
    throw fail(CM.sealedKey)
  }
  const config = probeConfig(row.id, row.type, key, row.base_url.replace(/\/+$/, ''), row.other, row.openai_organization, row.setting, row.proxy_url.trim())
  return await listUpstreamModels(row.type, { ...config, credentials: credentialStore(deps), outbound: deps.outbound })
}

/** `POST /api/channel/fetch_models`: the model list of settings not saved yet. */
export async function fetchUnsavedModels (deps: Deps<'outbound'>, body: FetchModelsBody): Promise<string[]> {
  checkType(body.type)
  const key = keyLines(body.key ?? '')[0]
  if (key === undefined) throw fail(CM.keyRequired)
  const base = normalizeBaseUrl(body.base_url ?? '')
  const proxyUrl = body.proxy_url?.trim() ?? ''
  checkProxyUrl(proxyUrl)
  await checkTargets(deps, { base_url: base, proxy_url: proxyUrl })
  return await listUpstreamModels(body.type, { ...probeConfig(0, body.type, key, base, OTHER_DEFAULTS[body.type] ?? '', null, '', proxyUrl), outbound: deps.outbound })
}
