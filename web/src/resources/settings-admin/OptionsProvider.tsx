import type { OptionKey } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Button from '@mui/material/Button'
import CircularProgress from '@mui/material/CircularProgress'
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { fetchOptions, type OptionItem } from './api'
import { pretty } from './json'

/** Options whose values are JSON: shown pretty-printed, compared by value rather than by text. */
export const JSON_OPTIONS: ReadonlySet<string> = new Set<OptionKey>([
  'Chats', 'GroupRatio', 'UserUsableGroups', 'TopupGroupRatio', 'ModelRatio', 'CompletionRatio', 'ModelPrice',
  'CacheRatio', 'CreateCacheRatio', 'AudioRatio', 'AudioCompletionRatio'
])

export type Options = Readonly<Record<string, OptionItem>>

/** An option the server accepted: the value it stored, and what was sent (credentials answer ''). */
export interface SavedOption { key: string, value: string, sent: string, cleared?: boolean }

interface OptionsState {
  options: Options
  /** Takes accepted values into the loaded options without reading them all again. */
  applySaved: (saved: SavedOption[]) => void
  /** Reads every option again (after a reset done by the server). */
  reload: () => Promise<void>
}

const OptionsContext = createContext<OptionsState | undefined>(undefined)

function shown (item: OptionItem): OptionItem {
  return JSON_OPTIONS.has(item.key) ? { ...item, value: pretty(item.value) } : item
}

/** Loads GET /api/option/ once for a settings tab and gives it to the tab's cards. */
export function OptionsProvider ({ children }: { children: ReactNode }) {
  const { t } = useTranslation()
  const [options, setOptions] = useState<Options>()
  const [error, setError] = useState<string>()

  const load = useCallback(async () => {
    try {
      const items = await fetchOptions()
      setOptions(Object.fromEntries(items.map((item) => [item.key, shown(item)])))
      setError(undefined)
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err))
    }
  }, [])
  useEffect(() => { void load() }, [load])

  const applySaved = useCallback((saved: SavedOption[]) => {
    setOptions((current) => {
      if (current === undefined) return current
      const next = { ...current }
      for (const { key, value, sent, cleared } of saved) {
        const before = next[key]
        next[key] = before?.secret === true ? { ...before, is_set: cleared !== true && (before.is_set === true || sent !== '') } : shown({ key, value })
      }
      return next
    })
  }, [])

  const state = useMemo(() => options === undefined ? undefined : { options, applySaved, reload: load }, [options, applySaved, load])
  if (state === undefined) {
    if (error === undefined) return <CircularProgress sx={{ m: 4 }} aria-label={t('common.loading')} />
    return (
      <Alert severity='error' action={<Button color='inherit' size='small' onClick={() => { setError(undefined); void load() }}>{t('settingsAdmin.retry')}</Button>}>
        {t('settingsAdmin.loadFailed', { message: error })}
      </Alert>
    )
  }
  return <OptionsContext.Provider value={state}>{children}</OptionsContext.Provider>
}

export function useOptions (): OptionsState {
  const ctx = useContext(OptionsContext)
  if (ctx === undefined) throw new Error('useOptions outside OptionsProvider')
  return ctx
}
