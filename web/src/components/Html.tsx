import Box, { type BoxProps } from '@mui/material/Box'
import DOMPurify from 'dompurify'
import { marked } from 'marked'
import { useMemo } from 'react'

// Links that open elsewhere never get a handle on the console (window.opener).
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('target')) node.setAttribute('rel', 'noopener noreferrer')
})

/**
 * Admin-provided HTML (Footer, About, Notice, ...) reduced to an allow-list: HTML elements only
 * (no SVG or MathML, where parser tricks hide scripts), no scripts, frames, forms or event
 * handlers, and links only to http(s), mailto and tel or relative addresses (DOMPurify's URI
 * allow-list drops javascript: and data: links).
 */
export function sanitize (html: string): string {
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    ADD_ATTR: ['target'],
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'frame', 'object', 'embed', 'base', 'meta', 'link'],
    FORBID_ATTR: ['srcdoc', 'formaction', 'action']
  })
}

/** Markdown or HTML from an option, sanitised. */
export function renderMarkdown (text: string): string {
  return sanitize(marked.parse(text, { async: false }))
}

export function Html ({ html, markdown = false, ...box }: { html: string, markdown?: boolean } & BoxProps) {
  const clean = useMemo(() => markdown ? renderMarkdown(html) : sanitize(html), [html, markdown])
  return <Box {...box} sx={{ '& img': { maxWidth: '100%' }, '& a': { color: 'primary.main' }, ...box.sx }} dangerouslySetInnerHTML={{ __html: clean }} />
}

/** True when an option holds a URL to embed rather than content to render. */
export const isUrl = (text: string): boolean => /^https?:\/\/\S+$/.test(text.trim())

/** A logo address the console shows: http(s), a relative path, or an inline raster/SVG image. */
export const isImageSource = (src: string): boolean => /^(?:https?:\/\/|\/(?!\/)|data:image\/)/i.test(src.trim())
