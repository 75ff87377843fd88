import { findOwnTasks, type Task } from '@modelgate/db'
import { readSunoSubmit, SUNO_KINDS, SUNO_PLATFORM, type SunoKind, sunoSubmitRequest, sunoSupported } from '@modelgate/providers'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { pinnedChannel } from '../../relay/admission.js'
import { authenticate } from '../../relay/auth.js'
import { RelayError, relayMessage, RM } from '../../relay/errors.js'
import { submitTask, type TaskAnswer } from '../../tasks/submit.js'

/** Most task ids one `POST /suno/fetch` may ask about. */
const MAX_FETCH_IDS = 500

/** Suno-API's envelope: `{code, message, data}`, code "success" when it went well. */
function sunoBody (code: string, message: string, data: unknown = null): { code: string, message: string, data: unknown } {
  return { code, message, data }
}

/** A task row as Suno-API's fetch reports a task. */
function sunoTask (row: Task): Record<string, unknown> {
  return {
    task_id: row.task_id,
    action: row.action,
    status: row.status,
    fail_reason: row.fail_reason,
    submit_time: row.submit_time,
    start_time: row.start_time,
    finish_time: row.finish_time,
    progress: row.progress,
    data: row.data ?? null
  }
}

function objectBody (body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw new RelayError(400, 'invalid_request_error', 'invalid_request', RM.bodyNotObject)
  }
  return body as Record<string, unknown>
}

/** A refused submit, in Suno's envelope: the upstream's 4xx status, else 400 (a 200 that refused). */
function refusal (status: number, message: string): TaskAnswer {
  return { status: status >= 400 && status < 500 ? status : 400, body: sunoBody('error', message) }
}

/**
 * Suno-API's routes (what Suno API clients call): `/suno/submit/{music,lyrics}` submitted to
 * CHANNEL_TYPE.suno channels and billed per task (suno_music / suno_lyrics in ModelPrice), `/suno/fetch`
 * (by ids) and `/suno/fetch/{id}` answered from Postgres with the caller's own tasks only (the
 * billing worker keeps them current), so an id of another account reads as a missing one.
 * Every answer, errors included, is Suno-API's `{code, message, data}`.
 */
export default async function sunoRoutes (suno: FastifyInstance) {
  const deps = suno.relayDeps
  suno.setErrorHandler(async (err: FastifyError, req, reply) => {
    if (err instanceof RelayError) {
      if (err.headers !== undefined) void reply.headers(err.headers)
      return await reply.code(err.status).send(sunoBody(err.code ?? 'error', relayMessage(req, err)))
    }
    const status = err.statusCode ?? 500
    if (status >= 500) req.log.error({ err }, 'suno route error')
    return await reply.code(status >= 500 ? 500 : status).send(sunoBody('error', status >= 500 ? 'internal error' : err.message))
  })

  const submit = (kind: SunoKind) => async (req: FastifyRequest, reply: FastifyReply) => {
    const caller = await authenticate(deps.callers, req)
    const body = objectBody(req.body)
    const { model, action } = SUNO_KINDS[kind]
    const outcome = await submitTask(deps, req, caller, {
      table: 'tasks',
      model,
      action,
      platform: SUNO_PLATFORM,
      accepts: sunoSupported,
      channel: pinnedChannel(deps.state, caller, sunoSupported),
      request: (channel) => sunoSubmitRequest(channel, kind, body),
      read: (status, answer) => {
        const r = readSunoSubmit(status, answer)
        if (!r.accepted) return { accepted: false, answer: refusal(status, r.failure.message), failure: r.failure }
        return {
          accepted: true,
          upstreamId: r.taskId,
          answer: { status: 200, body: sunoBody('success', '', r.taskId) },
          // What was asked, for the console's task list.
          row: { properties: JSON.stringify(body) }
        }
      }
    })
    return await reply.code(outcome.answer.status).send(outcome.answer.body)
  }
  suno.post('/suno/submit/music', submit('music'))
  suno.post('/suno/submit/lyrics', submit('lyrics'))

  suno.post('/suno/fetch', async (req) => {
    const caller = await authenticate(deps.callers, req)
    const body = objectBody(req.body)
    const ids = Array.isArray(body['ids']) ? body['ids'].filter((id): id is string => typeof id === 'string' && id !== '') : []
    if (ids.length === 0) throw new RelayError(400, 'invalid_request_error', 'invalid_request', 'ids is required: the task ids to fetch')
    if (ids.length > MAX_FETCH_IDS) throw new RelayError(400, 'invalid_request_error', 'invalid_request', `at most ${MAX_FETCH_IDS} ids per fetch`)
    const action = typeof body['action'] === 'string' ? body['action'].toUpperCase() : ''
    const rows = await findOwnTasks(deps.db, 'tasks', caller.record.user.id, [...new Set(ids)], SUNO_PLATFORM)
    return sunoBody('success', '', rows.filter((row) => action === '' || row.action === action).map(sunoTask))
  })

  suno.get<{ Params: { id: string } }>('/suno/fetch/:id', async (req, reply) => {
    const caller = await authenticate(deps.callers, req)
    const [row] = await findOwnTasks(deps.db, 'tasks', caller.record.user.id, [req.params.id], SUNO_PLATFORM)
    if (row === undefined) return await reply.code(404).send(sunoBody('task_not_exist', 'task not exist'))
    return sunoBody('success', '', sunoTask(row))
  })
}
