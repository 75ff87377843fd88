/**
 * Reading what the task lists carry (progress text, the stored upstream `data`) for display. The
 * stored data are whatever the upstream answered: every field is checked before it is shown, and
 * only http(s) addresses ever become images, players or links (a stored javascript: or data: URL
 * is shown as nothing).
 */

/** Statuses after which a task never changes again (both task tables). */
const FINISHED = new Set(['SUCCESS', 'FAILURE'])

/** Whether a task can still change: the lists refresh themselves while one on the page can. */
export const isUnfinished = (status: string): boolean => !FINISHED.has(status)

export const isWebUrl = (url: unknown): url is string => typeof url === 'string' && /^https?:\/\/[^\s]+$/i.test(url)

/**
 * The percentage of a progress text ("45%", "45", "0%"), clamped to 0..100; undefined when the
 * text is not a number (it is then shown as it is).
 */
export function percentOf (progress: string): number | undefined {
  const m = /^\s*(\d{1,3}(?:\.\d+)?)\s*%?\s*$/.exec(progress)
  if (m === null) return undefined
  return Math.min(100, Math.max(0, Number(m[1])))
}

/** One generated song (Suno clip): only the fields that are there and usable. */
export interface Clip {
  id?: string
  title?: string
  tags?: string
  audioUrl?: string
  imageUrl?: string
  videoUrl?: string
}

/** Generated lyrics (a Suno lyrics task). */
export interface Lyrics { title?: string, text: string }

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const text = (v: unknown): string | undefined => typeof v === 'string' && v.trim() !== '' ? v : undefined
const url = (v: unknown): string | undefined => isWebUrl(v) ? v : undefined

/** The stored data as JSON (a jsonb column may hold a JSON text). */
function parsed (data: unknown): unknown {
  if (typeof data !== 'string') return data
  try {
    return JSON.parse(data) as unknown
  } catch {
    return undefined
  }
}

/** The list of items of a task's data: an array itself, or under `clips` or `data`. */
function itemsOf (data: unknown): Json[] {
  const d = parsed(data)
  if (Array.isArray(d)) return d.filter(isObject)
  if (!isObject(d)) return []
  for (const key of ['clips', 'data']) {
    const inner = d[key]
    if (Array.isArray(inner)) return inner.filter(isObject)
  }
  return [d]
}

/** The songs of a music task's data (`[{title, audio_url, image_url, video_url}, ...]`), those with something to play or show. */
export function clipsOf (data: unknown): Clip[] {
  return itemsOf(data).flatMap((c) => {
    const metadata = isObject(c['metadata']) ? c['metadata'] : {}
    const clip: Clip = {
      id: text(c['id']),
      title: text(c['title']),
      tags: text(metadata['tags']) ?? text(c['tags']),
      audioUrl: url(c['audio_url']),
      imageUrl: url(c['image_large_url']) ?? url(c['image_url']),
      videoUrl: url(c['video_url'])
    }
    return clip.audioUrl !== undefined || clip.imageUrl !== undefined || clip.videoUrl !== undefined ? [clip] : []
  })
}

/** The lyrics of a lyrics task's data (`{title, text}`, alone or in a list). */
export function lyricsOf (data: unknown): Lyrics[] {
  return itemsOf(data).flatMap((c) => {
    const body = text(c['text'])
    return body === undefined ? [] : [{ title: text(c['title']), text: body }]
  })
}

/**
 * The address of a generated video when the stored data name one (`url`, `video_url`,
 * `result_url`, `download_url`, also in a first item); undefined otherwise: an OpenAI-style video
 * object has none, its content is fetched with an API key.
 */
export function videoUrlOf (data: unknown): string | undefined {
  for (const item of itemsOf(data)) {
    for (const key of ['url', 'video_url', 'result_url', 'download_url']) {
      const found = url(item[key])
      if (found !== undefined) return found
    }
  }
  return undefined
}
