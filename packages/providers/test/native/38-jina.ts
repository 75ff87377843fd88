// Type 38: Jina AI (api.jina.ai), Bearer key: /v1/embeddings (OpenAI's shape, with Jina's own
// fields) and /v1/rerank; no chat. Errors as {detail} (newer answers add a `code`).
import { testChannel, type ConvertedResponse, type RelayRequest } from '../../src/index.js'
import { bytesOf, type NativeProtocol, parsed, relayRequest } from '../kit.js'

const KEY = 'jina_test38abcdefghijklmnopqrstuvwxyz'

const jinaError = (detail: unknown, code?: string) => JSON.stringify({ detail, ...(code === undefined ? {} : { code }) })

const embeddingList = (vectors: number[][], model: string) => ({
  model, object: 'list', usage: { total_tokens: 9, prompt_tokens: 9 }, data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding }))
})

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 38, type: 38, key: KEY, baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'jina_wrongkey',
  authorized: (seen, channel) => seen.headers.authorization === `Bearer ${channel.key}`,
  refuse: (res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' }).end(jinaError('Invalid API key. Please get your free API key at https://jina.ai', 'AUTH_INVALID_API_KEY'))
  },
  endpoints: ['embeddings', 'rerank'],
  errors: [
    { what: '401 invalid key', status: 401, body: jinaError('Invalid API key', 'AUTH_INVALID_API_KEY'), action: 'disable', code: 'AUTH_INVALID_API_KEY' },
    { what: '401 without a code', status: 401, body: jinaError('Unauthorized'), action: 'disable' },
    { what: '402 insufficient balance', status: 402, body: jinaError('Insufficient balance: please top up your account.'), action: 'disable' },
    { what: '403 insufficient balance', status: 403, body: jinaError('Insufficient account balance', 'AUTHZ_INSUFFICIENT_BALANCE'), action: 'disable', code: 'AUTHZ_INSUFFICIENT_BALANCE' },
    { what: '403 plan limit of a request', status: 403, body: jinaError('Resource limit exceeded for your plan', 'AUTHZ_RESOURCE_LIMIT_EXCEEDED'), action: 'client', code: 'AUTHZ_RESOURCE_LIMIT_EXCEEDED' },
    { what: '429 rate limit', status: 429, body: jinaError('Rate limit exceeded: 500 requests per minute'), action: 'retry' },
    { what: '400 unknown model', status: 400, body: jinaError("Model 'jina-x' not found", 'INPUT_MODEL_NOT_FOUND'), action: 'client', code: 'INPUT_MODEL_NOT_FOUND' },
    { what: '422 validation', status: 422, body: jinaError([{ type: 'missing', loc: ['body', 'input'], msg: 'Field required' }]), action: 'client' },
    { what: '500 internal', status: 500, body: jinaError('Internal Server Error'), action: 'retry' }
  ],
  extra: async (t, { up, channel, adaptor, serve, send }) => {
    const convert = async (req: RelayRequest, res: Response): Promise<ConvertedResponse> =>
      adaptor.convertResponse(channel, req, res.status, res.headers.get('content-type') ?? '', await bytesOf(res))

    t.test('embeddings keep Jina\'s fields, answer in OpenAI\'s shape with Jina\'s usage', async (t) => {
      const vectors = [[0.5, -0.25], [0.75, 1]]
      serve(embeddingList(vectors, 'jina-embeddings-v3'))
      const req: RelayRequest = { ...relayRequest('embeddings', { model: 'alias', input: ['a', 'b'], task: 'retrieval.passage', dimensions: 2, late_chunking: true, encoding_format: 'float' }), model: 'jina-embeddings-v3' }
      const res = await send(req)
      const seen = up.last()
      t.equal(seen.url, '/v1/embeddings')
      t.equal(seen.headers.authorization, `Bearer ${KEY}`)
      t.same(parsed(seen.body), { model: 'jina-embeddings-v3', input: ['a', 'b'], task: 'retrieval.passage', dimensions: 2, late_chunking: true }, 'OpenAI\'s encoding_format dropped, the rest as sent')
      const converted = await convert(req, res)
      t.same(converted.usage, { promptTokens: 9, completionTokens: 0 })
      t.same(parsed(Buffer.from(converted.body)), embeddingList(vectors, 'jina-embeddings-v3'), 'forwarded unchanged')

      const b64: RelayRequest = { ...req, body: { input: 'a', encoding_format: 'base64' } }
      const encoded = parsed(Buffer.from((await convert(b64, await send(b64))).body)) as { data: Array<{ embedding: string }>, usage: unknown }
      t.same(parsed(up.last().body), { model: 'jina-embeddings-v3', input: ['a'] }, 'one input becomes a list')
      const floats = new Float32Array(new Uint8Array(Buffer.from(encoded.data[0]?.embedding ?? '', 'base64')).buffer)
      t.same([...floats], vectors[0], 'base64 of little-endian float32')
      t.same(encoded.usage, { total_tokens: 9, prompt_tokens: 9 })

      const native: RelayRequest = { ...req, body: { input: ['a'], encoding_format: 'base64', embedding_type: 'binary' } }
      serve({ ...embeddingList([], 'jina-embeddings-v3'), data: [{ object: 'embedding', index: 0, embedding: [12, -7] }] })
      const kept = parsed(Buffer.from((await convert(native, await send(native))).body)) as { data: Array<{ embedding: unknown }> }
      t.same(kept.data[0]?.embedding, [12, -7], 'Jina\'s own embedding_type is Jina\'s answer')
      t.equal(parsed(up.last().body).embedding_type, 'binary')
    })

    t.test('rerank goes through in Jina\'s shape with its token usage', async (t) => {
      const answer = { model: 'jina-reranker-v2-base-multilingual', usage: { total_tokens: 17 }, results: [{ index: 1, document: { text: 'Paris' }, relevance_score: 0.93 }] }
      serve(answer)
      const req: RelayRequest = { ...relayRequest('rerank', { query: 'capital of France', documents: ['Berlin', 'Paris'], top_n: 1, return_documents: true }), model: 'jina-reranker-v2-base-multilingual' }
      const res = await send(req)
      t.equal(up.last().url, '/v1/rerank')
      t.same(parsed(up.last().body), { model: 'jina-reranker-v2-base-multilingual', query: 'capital of France', documents: ['Berlin', 'Paris'], top_n: 1, return_documents: true })
      const converted = await convert(req, res)
      t.same(converted.usage, { promptTokens: 17, completionTokens: 0 })
      t.same(parsed(Buffer.from(converted.body)), answer)
    })

    t.test('the channel test embeds for embedding models and reranks for rerankers, without chat', async (t) => {
      t.notOk(adaptor.supports('chat', 'openai'))
      for (const [model, endpoint, path] of [['jina-clip-v2', 'embeddings', '/v1/embeddings'], ['jina-embeddings-v4', 'embeddings', '/v1/embeddings'], ['jina-reranker-m0', 'rerank', '/v1/rerank']] as const) {
        const req = adaptor.testRequest(channel, model)
        t.equal(req.endpoint, endpoint, model)
        serve(endpoint === 'rerank' ? { model, usage: { total_tokens: 2 }, results: [{ index: 0, relevance_score: 0.5 }] } : embeddingList([[0.1]], model))
        t.match(await testChannel(adaptor, channel, model), { ok: true, message: '' }, `${model}: the test passes`)
        t.equal(up.last().url, path)
        t.equal(parsed(up.last().body).model, model)
        t.same((await convert(req, await send(req))).usage, { promptTokens: endpoint === 'rerank' ? 2 : 9, completionTokens: 0 })
      }
      t.match(await testChannel(adaptor, { ...channel, key: 'jina_wrong' }, 'jina-embeddings-v3'), { ok: false, action: 'disable' })
    })

    t.test('the default base URL is Jina\'s API; no model list', async (t) => {
      const bare = { ...channel, baseUrl: '' }
      t.equal(adaptor.buildRequest(bare, relayRequest('embeddings', { input: 'x' })).url, 'https://api.jina.ai/v1/embeddings')
      t.equal(adaptor.buildRequest({ ...channel, baseUrl: 'https://api.jina.ai/v1' }, relayRequest('rerank', { query: 'q', documents: [] })).url, 'https://api.jina.ai/v1/rerank')
      t.equal(adaptor.listModelsRequest(channel), undefined)
    })
  }
}
