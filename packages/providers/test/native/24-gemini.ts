// Type 24: the Gemini API (generativelanguage.googleapis.com), key in x-goog-api-key.
import { MODEL, type NativeProtocol } from '../kit.js'
import { GEMINI_USAGE, geminiAnswer, geminiError, geminiEvents } from './gemini-wire.js'

export const fixture: NativeProtocol = {
  channel: (origin) => ({ id: 24, type: 24, key: 'AIza-test-24', baseUrl: origin, other: '', organization: null, setting: {} }),
  wrongKey: 'AIza-wrong',
  authorized: (seen, channel) => seen.headers['x-goog-api-key'] === channel.key && seen.headers.authorization === undefined && !seen.url.includes('key='),
  refuse: (res) => {
    res.writeHead(400, { 'Content-Type': 'application/json' }).end(geminiError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'))
  },
  chat: {
    path: (model, stream) => `/v1beta/models/${model}${stream ? ':streamGenerateContent?alt=sse' : ':generateContent'}`,
    answer: geminiAnswer([{ text: 'Hello there' }], 'STOP'),
    stream: () => geminiEvents([
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Héllo, ' }] }, index: 0 }], usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 }, modelVersion: MODEL, responseId: 'resp_1' },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'wörld 你好 🎉' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: GEMINI_USAGE, modelVersion: MODEL, responseId: 'resp_1' }
    ]),
    tools: {
      answer: geminiAnswer([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }], 'STOP'),
      stream: () => geminiEvents([
        { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] }, finishReason: 'STOP', index: 0 }], usageMetadata: GEMINI_USAGE, modelVersion: MODEL, responseId: 'resp_1' }
      ])
    },
    checkBody: (t, body) => {
      t.same(body.systemInstruction, { parts: [{ text: 'Be brief.' }] }, 'system instruction')
      t.same(body.contents, [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }], 'contents')
      t.same(body.tools, [{ functionDeclarations: [{ name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }] }], 'tools')
      t.equal(body.model, undefined, 'the model goes in the URL')
    }
  },
  models: {
    path: '/v1beta/models?pageSize=1000',
    answer: {
      models: [
        { name: 'models/model-a', displayName: 'Model A', supportedGenerationMethods: ['generateContent', 'countTokens'] },
        { name: 'models/embedding-x', displayName: 'Embedding', supportedGenerationMethods: ['embedContent'] },
        { name: 'models/model-b', displayName: 'Model B', supportedGenerationMethods: ['generateContent'] }
      ]
    }
  },
  errors: [
    { what: '400 invalid key', status: 400, body: geminiError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'), action: 'disable', code: 'API_KEY_INVALID' },
    { what: '403 permission denied', status: 403, body: geminiError(403, 'PERMISSION_DENIED', 'Your API key was reported as leaked. Please use another API key.'), action: 'disable', code: 'PERMISSION_DENIED' },
    { what: '400 billing required', status: 400, body: geminiError(400, 'FAILED_PRECONDITION', 'Gemini API free tier is not available in your country. Please enable billing on your project in Google AI Studio.'), action: 'disable', code: 'FAILED_PRECONDITION' },
    { what: '429 quota', status: 429, body: geminiError(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details.'), action: 'retry', code: 'RESOURCE_EXHAUSTED' },
    { what: '500 internal', status: 500, body: geminiError(500, 'INTERNAL', 'An internal error has occurred.'), action: 'retry', code: 'INTERNAL' },
    { what: '503 unavailable', status: 503, body: geminiError(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'), action: 'retry', code: 'UNAVAILABLE' },
    { what: '400 invalid argument', status: 400, body: geminiError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.'), action: 'client', code: 'INVALID_ARGUMENT' },
    { what: '404 unknown model', status: 404, body: geminiError(404, 'NOT_FOUND', 'models/gemini-9 is not found for API version v1beta.'), action: 'client', code: 'NOT_FOUND' }
  ]
}
