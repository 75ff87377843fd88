import { once } from 'node:events'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { until } from '@modelgate/testing'
import t, { type Test } from 'tap'
import { ClientGone, FirstByteTimeout, isTimeout, readAll, readText, send } from '../src/relay/upstream.js'

/** A real HTTP server on 127.0.0.1 answering each request with `answer`. */
async function upstream (t: Test, answer: (res: ServerResponse) => void | Promise<void>) {
  const closed: boolean[] = []
  const server = createServer((req, res) => {
    req.resume()
    res.on('close', () => closed.push(!res.writableFinished))
    req.on('end', () => { void answer(res) })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions?x=1`
  return { url, cutShort: () => closed.filter(Boolean).length }
}
const post = (url: string, body = '{}') => ({ method: 'POST' as const, url, headers: { 'content-type': 'application/json' }, body })
const tick = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

t.test('an answer: status, content type and the whole body; the text of an error body, capped', async (t) => {
  const up = await upstream(t, (res) => { res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' }).end('{"ok":true}') })
  const res = await send(post(up.url), new ClientGone(), { idleMs: 5000 })
  t.equal(res.status, 200)
  t.equal(res.contentType, 'application/json; charset=utf-8')
  t.equal((await readAll(res, 1000)).toString(), '{"ok":true}')
  const big = await upstream(t, (res) => { res.writeHead(500); res.write('x'.repeat(100)); res.end('y'.repeat(100)) })
  const failed = await send(post(big.url), new ClientGone(), { idleMs: 5000 })
  t.equal(failed.status, 500)
  t.equal(await readText(failed, 150), 'x'.repeat(100) + 'y'.repeat(50), 'the text is cut at the limit, the rest read and dropped')
})

t.test('an answer over the limit is refused and its connection dropped; a body cut short fails', async (t) => {
  const up = await upstream(t, async (res) => {
    res.writeHead(200)
    for (let i = 0; i < 50 && !res.destroyed; i++) { res.write('z'.repeat(1000)); await tick(2) }
    res.end()
  })
  await t.rejects(readAll(await send(post(up.url), new ClientGone(), { idleMs: 5000 }), 5000), /larger than 5000 bytes/)
  await until(() => up.cutShort() === 1, 5000, 10)
  t.equal(up.cutShort(), 1, 'the upstream saw the connection go before it finished')
  const cut = await upstream(t, async (res) => { res.writeHead(200, { 'content-length': '100' }); res.write('partial'); await tick(10); res.destroy() })
  await t.rejects(readAll(await send(post(cut.url), new ClientGone(), { idleMs: 5000 }), 5000))
})

t.test('a reader that stops the flow gets nothing more until it resumes', async (t) => {
  const up = await upstream(t, async (res) => {
    res.writeHead(200)
    for (let i = 0; i < 5; i++) { res.write(`chunk${i};`); await tick(5) }
    res.end()
  })
  for (const attachAfter of [0, 150]) {
    const res = await send(post(up.url), new ClientGone(), { idleMs: 5000 })
    // 150 ms: the whole body has arrived before the reader, and still waits for it chunk by chunk.
    await tick(attachAfter)
    const seen: string[] = []
    let flowing = false
    const reading = res.read((chunk) => {
      seen.push(chunk.toString())
      return flowing
    })
    await until(() => seen.length > 0, 5000, 10)
    await tick(100)
    t.equal(seen.length, 1, `one chunk, then the flow stops (reader attached after ${attachAfter} ms)`)
    await tick(50)
    t.equal(seen.length, 1, 'nothing more arrives while stopped')
    let ended = false
    void reading.then(() => { ended = true })
    await tick(10)
    t.notOk(ended, 'the body has not ended for the reader while chunks wait')
    flowing = true
    res.resume()
    await reading
    t.equal(seen.join(''), 'chunk0;chunk1;chunk2;chunk3;chunk4;', 'then the rest, in order')
  }
})

t.test('a reader that stops on every chunk takes the whole body one resume at a time', async (t) => {
  const up = await upstream(t, async (res) => {
    res.writeHead(200)
    for (let i = 0; i < 20; i++) { res.write(`c${i};`); if (i % 7 === 0) await tick(3) }
    res.end()
  })
  const res = await send(post(up.url), new ClientGone(), { idleMs: 5000 })
  const seen: string[] = []
  let resumes = 0
  const reading = res.read((chunk) => {
    seen.push(chunk.toString())
    setTimeout(() => { resumes++; res.resume() }, 1)
    return false
  })
  await reading
  t.equal(seen.join(''), Array.from({ length: 20 }, (_, i) => `c${i};`).join(''), 'every byte, in order')
  t.ok(resumes >= seen.length - 1, 'each chunk came after a resume')
})

t.test('a client that leaves cancels the call, before or after the headers', async (t) => {
  const slow = await upstream(t, async (res) => { await tick(300); if (!res.destroyed) res.writeHead(200).end('late') })
  const gone = new ClientGone()
  const pending = send(post(slow.url), gone, { idleMs: 5000 })
  await tick(50)
  gone.abort()
  await t.rejects(pending, /client has gone/)
  const streaming = await upstream(t, async (res) => {
    res.writeHead(200)
    for (let i = 0; i < 100 && !res.destroyed; i++) { res.write('data\n\n'); await tick(5) }
    res.end()
  })
  const leaving = new ClientGone()
  const res = await send(post(streaming.url), leaving, { idleMs: 5000 })
  const reading = res.read(() => true)
  await tick(30)
  leaving.abort()
  await t.rejects(reading, /client has gone/)
  await until(() => streaming.cutShort() === 1, 5000, 10)
  t.equal(streaming.cutShort(), 1, 'the upstream connection was closed under the stream')
  t.equal(leaving.listenerCount('abort'), 0, 'nothing left listening once the call ended')
})

t.test('an upstream that never answers times out', async (t) => {
  const silent = await upstream(t, () => {})
  const err = await send(post(silent.url), new ClientGone(), { idleMs: 200 }).then(() => undefined, (e: unknown) => e)
  t.match(err, /timeout/i)
  t.ok(isTimeout(err), 'recognised as a timeout')
})

t.test('the first-byte timeout: silent, or headers then nothing, is cut at it; a slow stream that began is not', async (t) => {
  const silent = await upstream(t, () => {})
  let started = Date.now()
  const err = await send(post(silent.url), new ClientGone(), { idleMs: 5000, firstByteMs: 300 }).then(() => undefined, (e: unknown) => e)
  let took = Date.now() - started
  t.type(err, FirstByteTimeout, 'no headers: the wait for them fails')
  t.ok(isTimeout(err))
  t.ok(took >= 280 && took < 2000, `at the first-byte timeout, not the idle one (${took} ms)`)

  const headersOnly = await upstream(t, (res) => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.flushHeaders() })
  started = Date.now()
  const res = await send(post(headersOnly.url), new ClientGone(), { idleMs: 5000, firstByteMs: 300 })
  t.equal(res.status, 200, 'the headers came in time')
  const stalled = await res.read(() => true).then(() => undefined, (e: unknown) => e)
  took = Date.now() - started
  t.type(stalled, FirstByteTimeout, 'then the body never began: the reader fails')
  t.equal(res.error, stalled, 'and the call says why')
  t.ok(took >= 280 && took < 2000, `${took} ms from the send`)
  await until(() => headersOnly.cutShort() === 1, 5000, 10)
  t.equal(headersOnly.cutShort(), 1, 'the stalled connection was closed')

  const slow = await upstream(t, async (res) => {
    res.writeHead(200)
    for (let i = 0; i < 6 && !res.destroyed; i++) { res.write(`c${i};`); await tick(150) }
    res.end()
  })
  const long = await send(post(slow.url), new ClientGone(), { idleMs: 5000, firstByteMs: 300 })
  const seen: string[] = []
  await long.read((chunk) => { seen.push(chunk.toString()); return true })
  t.equal(seen.join(''), 'c0;c1;c2;c3;c4;c5;', 'a stream longer than the first-byte timeout, begun in time, is whole')
  t.equal(long.error, undefined)
})
