import type { OptionKey } from '@modelgate/contracts'
import { useCallback, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useStatus } from '../../api/useStatus'
import { useNotify } from '../../components/Notify'
import { useVerification } from '../../components/VerifyDialog'
import { clearOption, type OptionItem, saveOption } from './api'
import { canonical } from './json'
import { JSON_OPTIONS, type Options, type SavedOption, useOptions } from './OptionsProvider'

export type Change = readonly [OptionKey, string]

/** How a card's values are prepared and checked before they are sent. */
export interface SaveRules {
  /** Turns typed text into the value to send (trimming, trailing slashes). */
  normalise?: Partial<Record<OptionKey, (value: string) => string>>
  /** A message when the (normalised) value may not be saved. */
  validate?: Partial<Record<OptionKey, (value: string) => string | undefined>>
  /** A message when the changes as a whole may not be saved. */
  check?: (changes: readonly Change[]) => string | undefined
  /** The order to send the changes in, when the server checks one option against another's stored value. */
  order?: (changes: readonly Change[]) => Change[]
}

/** Values typed but not saved yet, by option. */
type Edits = Partial<Record<OptionKey, string>>

export interface OptionForm {
  options: Options
  /** The value shown: the edit, else the stored value ('' for credentials). */
  value: (key: OptionKey) => string
  item: (key: OptionKey) => OptionItem | undefined
  set: (key: OptionKey, value: string) => void
  /** The message of the last refused save of this field. */
  error: (key: OptionKey) => string | undefined
  /** The edited options that differ from what is stored, normalised. */
  changes: (rules?: SaveRules, pending?: Edits) => Change[]
  /**
   * Saves the changed options one by one, with `pending` values set in the same action (an
   * editor's confirmed row); false when nothing was saved in full.
   */
  save: (rules?: SaveRules, pending?: Edits) => Promise<boolean>
  /** Forgets the edits of `keys`. */
  discard: (keys: readonly OptionKey[]) => void
  /** Removes a stored credential at once; false when the server refused. */
  clear: (key: OptionKey, label: string) => Promise<boolean>
  saving: boolean
}

/**
 * The edits of one settings card over the tab's loaded options. Only edited keys are kept, so a
 * save in one card (which updates the loaded options) leaves another card's unsaved edits alone.
 */
export function useOptionForm (): OptionForm {
  const { t } = useTranslation()
  const notify = useNotify()
  // Replacing or clearing a credential needs a fresh secure verification: the dialog asks once, then the save goes on.
  const { withVerification } = useVerification()
  const { reload: reloadStatus } = useStatus()
  const { options, applySaved } = useOptions()
  const [edits, setEdits] = useState<Edits>({})
  const [errors, setErrors] = useState<Partial<Record<OptionKey, string>>>({})
  const [saving, setSaving] = useState(false)

  const item = (key: OptionKey) => options[key]
  const value = (key: OptionKey) => edits[key] ?? (options[key]?.secret === true ? '' : options[key]?.value ?? '')
  const set = useCallback((key: OptionKey, v: string) => {
    setEdits((e) => ({ ...e, [key]: v }))
    setErrors((e) => ({ ...e, [key]: undefined }))
  }, [])
  const discard = useCallback((keys: readonly OptionKey[]) => {
    setEdits((e) => {
      const next = { ...e }
      for (const key of keys) delete next[key]
      return next
    })
  }, [])

  const changes = (rules: SaveRules = {}, pending: Edits = {}): Change[] => {
    const out: Change[] = []
    for (const [key, edit] of Object.entries({ ...edits, ...pending }) as Array<[OptionKey, string]>) {
      const stored = options[key]
      const v = rules.normalise?.[key]?.(edit) ?? edit
      // A credential is never sent back to the console: a blank field means "keep it".
      if (stored?.secret === true) {
        if (v !== '') out.push([key, v])
      } else if (JSON_OPTIONS.has(key)) {
        if (canonical(v) !== canonical(stored?.value ?? '')) out.push([key, v])
      } else if (v !== (stored?.value ?? '')) {
        out.push([key, v])
      }
    }
    return out
  }

  const save = async (rules: SaveRules = {}, pending: Edits = {}): Promise<boolean> => {
    const list = changes(rules, pending)
    if (list.length === 0) {
      notify.warning(t('settingsAdmin.nothingChanged'))
      return false
    }
    const refused: Partial<Record<OptionKey, string>> = {}
    for (const [key, v] of list) {
      const problem = rules.validate?.[key]?.(v)
      if (problem !== undefined) refused[key] = problem
    }
    const first = Object.values(refused)[0]
    if (first !== undefined) {
      setErrors((e) => ({ ...e, ...refused }))
      notify.error(first)
      return false
    }
    const overall = rules.check?.(list)
    if (overall !== undefined) {
      notify.error(overall)
      return false
    }
    const ordered = rules.order?.(list) ?? list

    setSaving(true)
    const saved: SavedOption[] = []
    let failure: string | undefined
    // One at a time: a refused key must not hide which of the others were stored.
    for (const [key, v] of ordered) {
      try {
        const answer = await withVerification(async () => await saveOption(key, v))
        saved.push({ key, value: answer.value, sent: v })
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err)
        failure ??= message
        setErrors((e) => ({ ...e, [key]: message }))
      }
    }
    setSaving(false)
    if (saved.length > 0) {
      applySaved(saved)
      discard(saved.map((s) => s.key as OptionKey))
      // The console shell reads the status object: a new name, logo or footer shows at once.
      reloadStatus()
    }
    if (failure === undefined) {
      notify.success(t('settingsAdmin.saved'))
      return true
    }
    notify.error(saved.length > 0 ? t('settingsAdmin.partialFailed', { message: failure }) : t('settingsAdmin.saveFailed', { message: failure }))
    return false
  }

  const clear = async (key: OptionKey, label: string): Promise<boolean> => {
    setSaving(true)
    try {
      await withVerification(async () => { await clearOption(key) })
      applySaved([{ key, value: '', sent: '', cleared: true }])
      discard([key])
      notify.success(t('settingsAdmin.secretCleared', { label }))
      return true
    } catch (err) {
      notify.error(t('settingsAdmin.saveFailed', { message: err instanceof Error ? err.message : String(err) }))
      return false
    } finally {
      setSaving(false)
    }
  }

  return { options, value, item, set, error: (key) => errors[key], changes, save, discard, clear, saving }
}
