// Gemini's generateContent on the wire, for the fixtures of the types that speak it (Gemini, Vertex AI).
import { MODEL } from '../kit.js'

export const GEMINI_USAGE = { promptTokenCount: 12, candidatesTokenCount: 7, cachedContentTokenCount: 4, totalTokenCount: 19 }

export const geminiAnswer = (parts: unknown[], finishReason: string) => ({
  candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }], usageMetadata: GEMINI_USAGE, modelVersion: MODEL, responseId: 'resp_1'
})

/** Gemini's `alt=sse` framing: one GenerateContentResponse per `data:` event, CRLF line ends. */
export const geminiEvents = (events: unknown[]): string => events.map((event) => `data: ${JSON.stringify(event)}\r\n\r\n`).join('')

export const geminiError = (code: number, status: string, message: string, reason?: string) => JSON.stringify({
  error: { code, message, status, ...(reason === undefined ? {} : { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }] }) }
})
