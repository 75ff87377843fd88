import {
  ApiEnvelope,
  CHANNEL_STATUS,
  ChannelCopyQuery,
  ChannelCountResponse,
  ChannelCreateBody,
  ChannelCreateResponse,
  ChannelDetailResponse,
  ChannelListQuery,
  ChannelModelsResponse,
  ChannelPageResponse,
  ChannelResponse,
  ChannelSearchQuery,
  ChannelTagBody,
  ChannelTagStatusBody,
  ChannelTestQuery,
  ChannelTestResponse,
  ChannelUpdateBody,
  FetchModelsBody,
  FetchModelsResponse
} from '@modelgate/contracts'
import { findChannelById, findChannelsByStatus, findChannelsByTag } from '@modelgate/db'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { fail, ok } from '../../../lib/errors.js'
import { CM } from '../../../lib/channel-messages.js'
import { auditChannels, channelSnapshots } from '../../../services/audit-targets.js'
import {
  ChannelTestAll,
  copyChannel,
  createChannels,
  editTag,
  fetchSavedChannelModels,
  fetchUnsavedModels,
  fixAbilities,
  getChannelDetail,
  knownModels,
  listChannelPage,
  removeChannel,
  removeDisabledChannels,
  setTagStatus,
  testChannelNow,
  updateChannelFields
} from '../../../services/channels/index.js'

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })

/** Channel administration; admins only. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = { db: app.db, redis: app.redis, log: app.log, secrets: app.secrets, outbound: app.outbound, publishChange: app.publishChange, loadOptions: app.loadOptions }
  const testAll = new ChannelTestAll(deps)
  app.addHook('onClose', async () => { await testAll.close() })

  app.get('/', {
    config: { auth: 'admin' },
    schema: { querystring: ChannelListQuery, response: { 200: ChannelPageResponse } }
  }, async (req) => ok(await listChannelPage(deps, req.query)))

  app.get('/search', {
    config: { auth: 'admin' },
    schema: { querystring: ChannelSearchQuery, response: { 200: ChannelPageResponse } }
  }, async (req) => ok(await listChannelPage(deps, req.query)))

  app.get('/models', {
    config: { auth: 'admin' },
    schema: { response: { 200: ChannelModelsResponse } }
  }, async () => ok(await knownModels(deps)))

  app.get('/test', {
    config: { auth: 'admin' },
    schema: { response: { 200: ApiEnvelope(Type.Null()) } }
  }, async (req) => {
    if (!await testAll.start()) throw fail(CM.testAlreadyRunning)
    return ok(null, req.t(CM.testAllStarted))
  })

  app.get('/test/:id', {
    config: { auth: 'admin' },
    schema: {
      params: IdParams,
      querystring: ChannelTestQuery,
      response: { 200: ChannelTestResponse }
    }
  }, async (req) => {
    const answer = await testChannelNow(deps, req.params.id, req.query.model, req.query.key_index)
    return { success: answer.success, message: answer.parts.map((p) => req.t(p.msg, p.vars)).join(' '), time: answer.time }
  })

  app.get('/fetch_models/:id', {
    config: { auth: 'admin' },
    schema: { params: IdParams, response: { 200: FetchModelsResponse } }
  }, async (req) => ok(await fetchSavedChannelModels(deps, req.params.id)))

  app.post('/fetch_models', {
    config: { auth: 'admin' },
    schema: { body: FetchModelsBody, response: { 200: FetchModelsResponse } }
  }, async (req) => ok(await fetchUnsavedModels(deps, req.body)))

  app.get('/:id', {
    config: { auth: 'admin' },
    schema: { params: IdParams, response: { 200: ChannelDetailResponse } }
  }, async (req) => ok(await getChannelDetail(deps, req.params.id)))

  // A copy keeps the key without anyone reading it (keys are write-only).
  app.post('/copy/:id', {
    config: { auth: 'admin' },
    schema: { params: IdParams, querystring: ChannelCopyQuery, response: { 200: ChannelResponse } }
  }, async (req) => {
    const copy = await copyChannel(deps, req.params.id, req.query.suffix)
    await auditChannels(deps, req, 'channel.create', [copy.id], undefined, `copy of channel ${req.params.id}`)
    return ok(copy, req.t(CM.channelCreated))
  })

  app.post('/', {
    config: { auth: 'admin' },
    schema: { body: ChannelCreateBody, response: { 200: ChannelCreateResponse } }
  }, async (req) => {
    const created = await createChannels(deps, req.body)
    await auditChannels(deps, req, 'channel.create', created.map((c) => c.id))
    return ok(created, created.length === 1 ? req.t(CM.channelCreated) : req.t(CM.channelsCreated, { n: created.length }))
  })

  app.put('/', {
    config: { auth: 'admin' },
    schema: { body: ChannelUpdateBody, response: { 200: ChannelResponse } }
  }, async (req) => {
    const row = await findChannelById(app.db, req.body.id)
    const updated = await updateChannelFields(deps, req.auth!.user.username, req.body)
    await auditChannels(deps, req, 'channel.update', [req.body.id], channelSnapshots(deps, row === undefined ? [] : [row]))
    return ok(updated, req.t(CM.channelUpdated))
  })

  app.delete('/disabled', {
    config: { auth: 'admin' },
    schema: { response: { 200: ChannelCountResponse } }
  }, async (req) => {
    const disabled = await findChannelsByStatus(app.db, [CHANNEL_STATUS.disabled, CHANNEL_STATUS.autoDisabled])
    const n = await removeDisabledChannels(deps)
    await auditChannels(deps, req, 'channel.delete', disabled.map((c) => c.id), channelSnapshots(deps, disabled), 'deleted with the disabled channels')
    return ok(n, req.t(CM.disabledDeleted, { n }))
  })

  app.post('/fix', {
    config: { auth: 'admin' },
    schema: { response: { 200: ChannelCountResponse } }
  }, async (req) => {
    const n = await fixAbilities(deps)
    return ok(n, req.t(CM.abilitiesFixed, { n }))
  })

  app.put('/tag', {
    config: { auth: 'admin' },
    schema: { body: ChannelTagBody, response: { 200: ChannelCountResponse } }
  }, async (req) => {
    const tagged = await findChannelsByTag(app.db, req.body.tag.trim())
    const n = await editTag(deps, req.body)
    await auditChannels(deps, req, 'channel.tag.update', tagged.map((c) => c.id), channelSnapshots(deps, tagged), `tag ${req.body.tag.trim()}`)
    return ok(n, req.t(CM.tagUpdated, { n }))
  })

  for (const [path, status] of [['/tag/enabled', CHANNEL_STATUS.enabled], ['/tag/disabled', CHANNEL_STATUS.disabled]] as const) {
    app.post(path, {
      config: { auth: 'admin' },
      schema: { body: ChannelTagStatusBody, response: { 200: ChannelCountResponse } }
    }, async (req) => {
      const tagged = await findChannelsByTag(app.db, req.body.tag.trim())
      const n = await setTagStatus(deps, req.auth!.user.username, req.body.tag, status)
      await auditChannels(deps, req, 'channel.tag.status', tagged.map((c) => c.id), channelSnapshots(deps, tagged), `tag ${req.body.tag.trim()}`)
      return ok(n, req.t(CM.tagUpdated, { n }))
    })
  }

  // The console calls DELETE /api/channel/{id}/; both spellings are routes so each declares its access.
  for (const url of ['/:id/', '/:id']) {
    app.delete(url, {
      config: { auth: 'admin' },
      schema: { params: IdParams, response: { 200: ApiEnvelope(Type.Null()) } }
    }, async (req) => {
      const row = await findChannelById(app.db, req.params.id)
      await removeChannel(deps, req.params.id)
      await auditChannels(deps, req, 'channel.delete', [req.params.id], channelSnapshots(deps, row === undefined ? [] : [row]))
      return ok(null, req.t(CM.channelDeleted))
    })
  }
}
export default routes
