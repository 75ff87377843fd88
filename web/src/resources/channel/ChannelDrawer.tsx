import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { FormDrawer } from '../../components/FormDrawer'
import { useNotify } from '../../components/Notify'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { useRecord } from '../../lib/useRecord'
import { createChannels, defaultModels, getChannel, knownModels, pricedModels, updateChannel } from './api'
import { ChannelAdvanced } from './ChannelAdvanced'
import { ChannelBasics } from './ChannelBasics'
import { ChannelKeys } from './ChannelKeys'
import { ChannelModels } from './ChannelModels'
import {
  bodyOf,
  type ChannelForm,
  type ChannelFormState,
  emptyForm,
  type FormErrors,
  type FormField,
  formOf,
  otherKind,
  relatedModels,
  validate
} from './form'

export interface ChannelDrawerProps {
  open: boolean
  /** The channel to edit; undefined creates. */
  channelId: number | undefined
  /** Channel type number (as text) -> name. */
  types: Record<string, string>
  groups: string[]
  onClose: () => void
  /** After a save, with the models this save added that have no price yet. */
  onSaved: (unpriced: string[]) => void
}

const NO_DEFAULTS: Record<string, string[]> = {}
const pricedSet = async (): Promise<ReadonlySet<string>> => new Set(await pricedModels())

/** The create/edit form (Channel edit drawer, 600 px; full width on small screens). */
export function ChannelDrawer ({ open, channelId, types, groups, onClose, onSaved }: ChannelDrawerProps) {
  const { t } = useTranslation()
  const notify = useNotify()
  const creating = channelId === undefined
  const [form, setForm] = useState<ChannelForm>(emptyForm)
  const [errors, setErrors] = useState<FormErrors>({})
  const { act, busy: saving } = useAction()
  // Read each time the drawer opens. A new channel starts with no models: the operator picks them,
  // or fills its type's models (or every model) with the buttons; nothing is served that nobody chose.
  const defaults = useLoad(open ? defaultModels : undefined, { initial: NO_DEFAULTS }).data
  const { data: allModels, setData: setAllModels } = useLoad(open ? knownModels : undefined, { initial: [] })
  const priced = useLoad(open ? pricedSet : undefined, { fresh: true }).data
  // The stored key, only once root revealed it (after verifying again); dropped when the drawer closes.
  const [storedKey, setStoredKey] = useState<string | undefined>()
  // The models the channel had before this edit: only those added now are new to price.
  const [before, setBefore] = useState<readonly string[]>([])
  // Until the channel's values are in (waiting), the fields stay hidden so nobody reads or types
  // into an empty form that the load is about to overwrite.
  const { loading, waiting } = useRecord(open, channelId, getChannel, {
    onLoad: (channel) => {
      const loaded = formOf(channel)
      setForm(loaded)
      setBefore(loaded.models)
    },
    onFail: onClose
  })

  useEffect(() => {
    // A revealed key is dropped as soon as the drawer closes, not kept until it opens again.
    setStoredKey(undefined)
    if (!open) return
    setErrors({})
    setForm(emptyForm())
    setBefore([])
  }, [open, channelId])

  const set = <K extends keyof ChannelForm>(key: K, value: ChannelForm[K]) => {
    setForm((f) => ({ ...f, [key]: value }))
    if (key in errors) setErrors((e) => ({ ...e, [key]: undefined }))
  }

  /**
   * A type change leaves the chosen models alone, except the previous type's full list filled by
   * "Fill related models" and left untouched, which becomes the new type's list; a type-specific
   * `other` does not carry over to a type where it means something else.
   */
  const changeType = (type: number) => {
    setForm((f) => {
      const previous = relatedModels(f.type, defaults)
      const untouched = f.models.length > 0 && f.models.length === previous.length && f.models.every((m, i) => m === previous[i])
      return {
        ...f,
        type,
        models: untouched ? [...relatedModels(type, defaults)] : f.models,
        other: otherKind(type) === otherKind(f.type) ? f.other : ''
      }
    })
    setErrors((e) => ({ ...e, models: undefined, other: undefined, key: undefined, setting: undefined }))
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    const found = validate(form, creating)
    setErrors(found)
    const first = Object.values(found)[0]
    if (first !== undefined) {
      notify.error(t(first))
      return
    }
    await act(async () => {
      const body = bodyOf(form)
      if (creating) {
        const made = await createChannels(form.batch ? { ...body, mode: 'batch' } : body)
        notify.success(made.length === 1 ? t('channel.form.created') : t('channel.form.createdMany', { count: made.length }))
      } else {
        await updateChannel({ id: channelId, ...body })
        notify.success(t('channel.form.updated'))
      }
      onSaved(priced === undefined ? [] : form.models.filter((m) => !priced.has(m) && !before.includes(m)))
    })
  }

  const errorText = (field: FormField) => errors[field] === undefined ? undefined : t(errors[field])
  const state: ChannelFormState = { form, set, errors, errorText, help: (field, text) => errorText(field) ?? text, creating }

  return (
    <FormDrawer
      open={open}
      title={creating ? t('channel.form.createTitle') : t('channel.form.editTitle')}
      width={600}
      onClose={onClose}
      onSubmit={submit}
      loading={loading}
      waiting={waiting}
      saving={saving}
      submitLabel={creating ? t('channel.form.submitCreate') : t('channel.form.submitEdit')}
    >
      <ChannelBasics state={state} types={types} onType={changeType} />
      <ChannelModels
        state={state} channelId={channelId} setErrors={setErrors}
        groups={groups} defaults={defaults} allModels={allModels} setAllModels={setAllModels} priced={priced}
      />
      <ChannelKeys state={state} channelId={channelId} storedKey={storedKey} onReveal={setStoredKey} />
      <ChannelAdvanced state={state} />
    </FormDrawer>
  )
}
