import Box from '@mui/material/Box'
import { useTheme } from '@mui/material/styles'
import { useCallback, useRef } from 'react'
import { useTranslation } from 'react-i18next'

/**
 * The sandbox of an admin-configured page (HomePageContent or About set to a URL): scripts, forms
 * and popups work, the top window cannot be navigated, and a page served from the console's own
 * origin loses that origin (a same-origin frame with scripts could otherwise lift its sandbox).
 */
export function frameSandbox (src: string, origin: string = window.location.origin): string {
  const own = (() => { try { return new URL(src, origin).origin === origin } catch { return true } })()
  return ['allow-scripts', 'allow-forms', 'allow-popups', 'allow-popups-to-escape-sandbox', ...own ? [] : ['allow-same-origin']].join(' ')
}

/** The origin messages to the frame are addressed to: the configured page's, never '*'. */
export function frameOrigin (src: string): string | undefined {
  try {
    const origin = new URL(src).origin
    return origin === 'null' ? undefined : origin
  } catch {
    return undefined
  }
}

/**
 * An admin-configured URL shown in a sandboxed frame. Once it loads it is told the console's theme
 * and language (`{ themeMode, lang }`), addressed to the configured page's origin only: a frame
 * that navigated elsewhere does not receive it.
 */
export function FramedPage ({ src, title, testId }: { src: string, title: string, testId?: string }) {
  const theme = useTheme()
  const { i18n } = useTranslation()
  const frame = useRef<HTMLIFrameElement>(null)
  const url = src.trim()
  const onLoad = useCallback(() => {
    const target = frameOrigin(url)
    if (target === undefined) return
    frame.current?.contentWindow?.postMessage({ themeMode: theme.palette.mode, lang: i18n.language }, target)
  }, [url, theme.palette.mode, i18n.language])
  return (
    <Box
      component='iframe' ref={frame} src={url} title={title} data-testid={testId} onLoad={onLoad}
      sandbox={frameSandbox(url)} referrerPolicy='no-referrer'
      sx={{ width: '100%', height: '80vh', border: 0 }}
    />
  )
}
