// The practical limit of a Node relay on this machine: Fastify receives the same request, undici
// forwards it to the mock upstream and the answer is piped back, streamed or not. No auth, no
// routing, no billing. Forked by run.ts with the upstream origin as its argument; reports its
// port over IPC.
import Fastify from 'fastify'
import { request } from 'undici'

const upstream = process.argv[2]
if (upstream === undefined) throw new Error('usage: bare-relay.ts <upstream origin>')

const app = Fastify({ logger: false })

app.post('/v1/chat/completions', async (req, reply) => {
  const res = await request(`${upstream}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-mock' },
    body: JSON.stringify(req.body)
  })
  return reply.code(res.statusCode).header('content-type', res.headers['content-type'] ?? 'application/json').send(res.body)
})

const address = await app.listen({ host: '127.0.0.1', port: 0 })
process.send?.({ port: Number(new URL(address).port) })
const stop = () => { void app.close().then(() => process.exit(0)) }
process.on('disconnect', stop)
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
