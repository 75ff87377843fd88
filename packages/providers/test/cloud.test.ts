// The cloud adaptors' building blocks: AWS Claude (type 33) model ids, event stream decoding and
// signing, Vertex AI (type 41) model names and assertions. Their wire behaviour is in
// test/native/33-aws-claude.ts and test/native/41-vertex-ai.ts.
import { generateKeyPairSync, verify } from 'node:crypto'
import t from 'tap'
import { adaptorFor, type ChannelConfig } from '../src/index.js'
import { CLAUDE_MODELS } from '../src/claude/index.js'
import { bedrockEventReader, bedrockModelId, classifyBedrockFailure, parseBedrockModels, signAws } from '../src/aws/index.js'
import { serviceAccount, vertexAssertion, vertexClaudeName, vertexRegion } from '../src/vertex/index.js'
import { bedrockStream, chunkMessage, exceptionMessage, sigV4Problem, sseEvents } from './native/bedrock-wire.js'
import { anthropicStream } from './native/anthropic-wire.js'

const channel = (type: number, key: string, other = ''): ChannelConfig => ({ id: type, type, key, baseUrl: '', other, organization: null, setting: {} })

t.test('every default model of AWS Claude has a Bedrock id, with an inference profile where one is needed', async (t) => {
  const aws = adaptorFor(33)
  t.same(aws?.defaultModels, CLAUDE_MODELS)
  for (const model of CLAUDE_MODELS) t.match(bedrockModelId(model, 'us-east-1'), /^us\.anthropic\.claude-[a-z0-9-]+(-v1(:0)?)?$/, model)
  t.equal(bedrockModelId('claude-opus-4-6', 'ap-southeast-1'), 'apac.anthropic.claude-opus-4-6-v1')
  t.equal(bedrockModelId('claude-sonnet-4-6', 'ap-southeast-1'), 'global.anthropic.claude-sonnet-4-6', 'no apac profile: the global one')
  t.equal(bedrockModelId('claude-sonnet-4-5', 'sa-east-1'), 'global.anthropic.claude-sonnet-4-5-20250929-v1:0')
  t.equal(bedrockModelId('claude-haiku-4-5-20251001', 'eu-west-3'), 'eu.anthropic.claude-haiku-4-5-20251001-v1:0')
  t.equal(bedrockModelId('claude-opus-4-1', 'us-gov-west-1'), 'anthropic.claude-opus-4-1-20250805-v1:0', 'GovCloud: no profile guessed')
  t.equal(bedrockModelId('eu.anthropic.claude-sonnet-4-5-20250929-v1:0', 'us-east-1'), 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0', 'a Bedrock id is kept')
  t.equal(bedrockModelId('my-custom-model', 'us-east-1'), 'my-custom-model')
})

t.test('the model list names known models by their Anthropic id', async (t) => {
  const body = JSON.stringify({
    modelSummaries: [
      { modelId: 'anthropic.claude-sonnet-4-5-20250929-v1:0', inferenceTypesSupported: ['INFERENCE_PROFILE'] },
      { modelId: 'anthropic.claude-3-haiku-20240307-v1:0', inferenceTypesSupported: ['ON_DEMAND'] },
      { modelId: 'anthropic.claude-3-haiku-20240307-v1:0:200k', inferenceTypesSupported: ['PROVISIONED'] },
      { modelId: 'anthropic.claude-future-9-v1:0', inferenceTypesSupported: ['ON_DEMAND'] }
    ]
  })
  t.same(parseBedrockModels(body), ['claude-sonnet-4-5-20250929', 'claude-3-haiku-20240307', 'anthropic.claude-future-9-v1:0'])
  t.same(parseBedrockModels('{"modelSummaries":[]}'), [])
})

t.test('the event stream reader decodes messages however the bytes are cut', async (t) => {
  const sse = anthropicStream([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'Héllo, ' }, { type: 'text_delta', text: 'wörld 你好 🎉' }] }], 'end_turn')
  const stream = bedrockStream(sseEvents(sse))
  const read = (cuts: (bytes: Buffer) => Buffer[]) => {
    const types: string[] = []
    const reader = bedrockEventReader({ event: (json) => types.push(String((json as { type: string }).type)), exception: (code) => types.push(`!${code}`) })
    for (const piece of cuts(stream)) reader.push(piece)
    reader.end()
    return types
  }
  const expected = ['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']
  t.same(read((b) => [b]), expected, 'one chunk')
  t.same(read((b) => [...b].map((byte) => Buffer.from([byte]))), expected, 'one byte at a time (preludes cut too)')
  t.same(read((b) => [b.subarray(0, 3), b.subarray(3, 700), b.subarray(700)]), expected, 'messages across chunks')
  t.same(read((b) => [b.subarray(0, b.length - 1)]), expected.slice(0, -1), 'a message cut short is not read')

  const types: string[] = []
  const reader = bedrockEventReader({ event: (json) => types.push(String((json as { type: string }).type)), exception: (code, message) => types.push(`${code}: ${message}`) })
  reader.push(Buffer.concat([chunkMessage({ type: 'message_start', message: {} }), exceptionMessage('modelStreamErrorException', 'boom'), chunkMessage({ type: 'message_stop' })]))
  t.same(types, ['message_start', 'modelStreamErrorException: boom'], 'nothing after an exception')
  const huge = Buffer.alloc(8)
  huge.writeUInt32BE(64 * 1024 * 1024, 0)
  const refused: string[] = []
  const guarded = bedrockEventReader({ event: () => refused.push('event'), exception: () => refused.push('exception') })
  guarded.push(huge)
  guarded.push(chunkMessage({ type: 'message_stop' }))
  t.same(refused, [], 'an impossible length stops the reading instead of buffering')
})

t.test('signing replaces stale signature headers and leaves host to the HTTP client', async (t) => {
  const ch = channel(33, 'AKIAIOSFODNN7EXAMPLE|secret-key|eu-west-1')
  const signed = await signAws(ch, {
    method: 'POST',
    url: 'https://bedrock-runtime.eu-west-1.amazonaws.com/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke',
    headers: { 'content-type': 'application/json', Authorization: 'Bearer stale', 'X-Amz-Date': '20000101T000000Z', Host: 'evil.example' },
    body: '{"a":1}'
  })
  t.same(Object.keys(signed.headers).map((name) => name.toLowerCase()).sort(), ['authorization', 'content-type', 'x-amz-content-sha256', 'x-amz-date'])
  const seen = { method: 'POST', url: '/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke', headers: { ...signed.headers, host: 'bedrock-runtime.eu-west-1.amazonaws.com' }, body: Buffer.from('{"a":1}') }
  t.equal(sigV4Problem(seen, { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'secret-key', region: 'eu-west-1' }), undefined)
  t.equal(sigV4Problem({ ...seen, body: Buffer.from('{"a":2}') }, { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'secret-key', region: 'eu-west-1' }), 'x-amz-content-sha256 is not the body\'s hash')
  t.equal(sigV4Problem(seen, { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'other', region: 'eu-west-1' }), 'signature mismatch')
})

t.test('Bedrock errors keep no credentials in their message', async (t) => {
  const failure = classifyBedrockFailure(403, JSON.stringify({ message: 'User: arn:aws:iam::123456789012:user/relay with key AKIAIOSFODNN7EXAMPLE is not authorized to perform: bedrock:InvokeModel' }))
  t.match(failure, { action: 'disable', code: 'AccessDeniedException' })
  t.notMatch(failure.message, /AKIAIOSFODNN7EXAMPLE/)
  t.match(classifyBedrockFailure(424, JSON.stringify({ message: 'Received error from the model' })), { action: 'retry', code: 'ModelErrorException' })
})

t.test('Vertex model names and regions', async (t) => {
  t.equal(vertexClaudeName('claude-sonnet-4-5-20250929'), 'claude-sonnet-4-5@20250929')
  t.equal(vertexClaudeName('claude-opus-4-20250514'), 'claude-opus-4@20250514')
  t.equal(vertexClaudeName('claude-opus-4-0'), 'claude-opus-4@20250514')
  t.equal(vertexClaudeName('claude-opus-4-6'), 'claude-opus-4-6')
  t.equal(vertexClaudeName('claude-3-5-haiku@20241022'), 'claude-3-5-haiku@20241022')
  const vertex = adaptorFor(41)
  t.equal(vertex?.defaultModels.filter((model) => model.startsWith('claude')).length, CLAUDE_MODELS.length)
  t.ok(vertex?.defaultModels[0]?.startsWith('gemini'), 'Gemini first')
  const key = '{"type":"service_account","project_id":"p-123456","private_key":"-----BEGIN PRIVATE KEY-----\\nx\\n-----END PRIVATE KEY-----\\n","client_email":"a@p-123456.iam.gserviceaccount.com"}'
  t.equal(vertexRegion(channel(41, key), 'gemini-2.5-pro'), 'global')
  t.equal(vertexRegion(channel(41, key, ' us-east5 '), 'claude-opus-4-1'), 'us-east5')
  const map = '{"default":"europe-west4","claude-opus-4-1@20250805":"us-east5","claude-haiku-4-5":"europe-west1"}'
  t.equal(vertexRegion(channel(41, key, map), 'claude-opus-4-1'), 'us-east5', 'by Vertex\'s name')
  t.equal(vertexRegion(channel(41, key, map), 'claude-haiku-4-5'), 'europe-west1', 'by the requested name')
  t.equal(vertexRegion(channel(41, key, map), 'models/gemini-2.5-pro'), 'europe-west4')
  t.equal(serviceAccount(channel(41, key)).tokenUri, 'https://oauth2.googleapis.com/token', 'Google\'s token endpoint by default')
})

t.test('the Vertex assertion is an RS256 JWT Google accepts', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const jwt = await vertexAssertion({ clientEmail: 'a@p.iam.gserviceaccount.com', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), privateKeyId: 'kid-1', tokenUri: 'https://oauth2.googleapis.com/token', projectId: 'p' })
  const [head = '', claims = '', signature = ''] = jwt.split('.')
  t.ok(verify('RSA-SHA256', Buffer.from(`${head}.${claims}`), publicKey, Buffer.from(signature, 'base64url')))
  t.same(JSON.parse(Buffer.from(head, 'base64url').toString()), { alg: 'RS256', typ: 'JWT', kid: 'kid-1' })
  const body = JSON.parse(Buffer.from(claims, 'base64url').toString()) as Record<string, number | string>
  t.match(body, { iss: 'a@p.iam.gserviceaccount.com', aud: 'https://oauth2.googleapis.com/token', scope: 'https://www.googleapis.com/auth/cloud-platform' })
  t.equal(Number(body.exp) - Number(body.iat), 3600)
})
