import Box, { type BoxProps } from '@mui/material/Box'
import DOMPurify from 'dompurify'
import { marked } from 'marked'
import { useMemo } from 'react'

/** Admin-provided HTML (Footer, About, Notice, ...) with scripts and event handlers removed. */
export function sanitize (html: string): string {
  return DOMPurify.sanitize(html, { ADD_ATTR: ['target'] })
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
