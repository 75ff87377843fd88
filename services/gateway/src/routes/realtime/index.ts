import websocket from '@fastify/websocket'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { sendOpenAIError } from '../../relay/errors.js'
import { admitSession, chooseProtocol, CLIENT_MAX_PAYLOAD, type RealtimeSession } from '../../relay/realtime.js'

/**
 * `GET /v1/realtime?model=...`, OpenAI's Realtime API over a websocket, relayed to the realtime
 * websocket of an OpenAI (CHANNEL_TYPE.openai) or Azure OpenAI (CHANNEL_TYPE.azure) channel. Frames pass unchanged both
 * ways, in order, each side paused while the other cannot keep up. Each response.done is billed
 * as its own usage event (text, audio and cached tokens at their ratios) against a reservation
 * taken before the response: the admission's for the first, then one per response.create or
 * server-started response (relay/realtime.ts).
 */
export default async function realtimeRoutes (scope: FastifyInstance) {
  const deps = scope.relayDeps
  /** Sessions admitted by the pre-handler (by request), for the websocket handler that follows the upgrade. */
  const admitted = new WeakMap<object, RealtimeSession>()
  await scope.register(websocket, {
    options: { handleProtocols: chooseProtocol, maxPayload: CLIENT_MAX_PAYLOAD, perMessageDeflate: false },
    // A client's socket failing (a reset, a frame too large) ends its session; not a gateway error.
    errorHandler (error, socket, req) {
      req.log.debug({ err: error }, 'realtime client socket error')
      socket.terminate()
    },
    // Open sessions end with "going away" when the gateway stops; their responses in flight
    // still report their usage within the grace period (the usage publisher waits for them).
    preClose (done) {
      for (const client of this.websocketServer.clients) client.close(1001, 'server shutting down')
      this.websocketServer.close()
      done()
    }
  })
  scope.route<{ Querystring: { model?: string } }>({
    method: 'GET',
    url: '/v1/realtime',
    preHandler: async (req) => {
      if (!req.ws) return
      const session = await admitSession(deps, req)
      if (session !== undefined) admitted.set(req, session)
    },
    handler: async (_req, reply: FastifyReply) => sendOpenAIError(reply, 426, {
      message: 'The Realtime API is a websocket: connect with an Upgrade: websocket request', type: 'invalid_request_error', code: 'websocket_required'
    }),
    wsHandler: (socket, req) => {
      const session = admitted.get(req)
      if (session === undefined) {
        socket.close(1011, 'session not admitted')
        return
      }
      admitted.delete(req)
      session.start(socket)
    }
  })
}
