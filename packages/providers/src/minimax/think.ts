const OPEN = '<think>'
const CLOSE = '</think>'

/** A piece of an answer's text: the visible content or the model's reasoning. */
export interface TextPiece {
  kind: 'content' | 'reasoning'
  text: string
}

/** Splits an answer's text, fed in any pieces, into reasoning and content. */
export interface ThinkSplitter {
  push: (text: string) => TextPiece[]
  /** The text ended: what was held back for a tag that never completed. */
  end: () => TextPiece[]
}

/** Length of the longest end of `text` that begins `tag` (a tag possibly cut by a chunk boundary). */
function heldFor (text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) if (tag.startsWith(text.slice(-n))) return n
  return 0
}

/**
 * A splitter of MiniMax's reasoning models' text (`<think>…</think>` before the answer, in the
 * content itself) into reasoning and content, in constant memory: a `<think>` only counts at
 * the very start (after blank space), the blank space after `<think>` and after `</think>` is
 * dropped, and a tag cut across chunks is held back until it is whole. Text without the tag
 * goes out as content at once.
 */
export function thinkSplitter (): ThinkSplitter {
  let state: 'start' | 'think' | 'answer' = 'start'
  let held = ''
  /** Blank space at the start of the reasoning or of the answer is dropped. */
  let trimStart = false

  function push (text: string): TextPiece[] {
    const out: TextPiece[] = []
    let rest = held + text
    held = ''
    for (;;) {
      if (state === 'start') {
        const trimmed = rest.trimStart()
        if (trimmed.length < OPEN.length && OPEN.startsWith(trimmed)) {
          held = rest
          return out
        }
        if (trimmed.startsWith(OPEN)) {
          state = 'think'
          trimStart = true
          rest = trimmed.slice(OPEN.length)
          continue
        }
        state = 'answer'
        continue
      }
      if (trimStart) {
        rest = rest.trimStart()
        if (rest === '') return out
        trimStart = false
      }
      if (state === 'answer') {
        if (rest !== '') out.push({ kind: 'content', text: rest })
        return out
      }
      const close = rest.indexOf(CLOSE)
      if (close === -1) {
        const keep = heldFor(rest, CLOSE)
        held = rest.slice(rest.length - keep)
        const reasoning = rest.slice(0, rest.length - keep)
        if (reasoning !== '') out.push({ kind: 'reasoning', text: reasoning })
        return out
      }
      const reasoning = rest.slice(0, close)
      if (reasoning !== '') out.push({ kind: 'reasoning', text: reasoning })
      state = 'answer'
      trimStart = true
      rest = rest.slice(close + CLOSE.length)
    }
  }

  return {
    push,
    end: () => {
      const rest = held
      held = ''
      if (rest === '' || (state !== 'think' && rest.trim() === '')) return []
      return [{ kind: state === 'think' ? 'reasoning' : 'content', text: rest }]
    }
  }
}

/** The reasoning and content of a whole answer's text. */
export function splitThink (text: string): { reasoning: string, content: string } {
  const splitter = thinkSplitter()
  let reasoning = ''
  let content = ''
  for (const piece of [...splitter.push(text), ...splitter.end()]) {
    if (piece.kind === 'reasoning') reasoning += piece.text
    else content += piece.text
  }
  return { reasoning, content }
}
