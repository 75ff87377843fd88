import type { OptionKey } from '@modelgate/contracts'
import Button from '@mui/material/Button'
import Tab from '@mui/material/Tab'
import Tabs from '@mui/material/Tabs'
import RestoreIcon from '@mui/icons-material/Restore'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNotify } from '../../components/Notify'
import { resetModelRatios } from './api'
import { useConfirm } from '../../components/Confirm'
import { type Field, FieldGrid, OptionCard, rulesOf } from './OptionCard'
import { useOptions } from './OptionsProvider'
import { useOptionForm } from './useOptionForm'
import { VisualRatioEditor } from './VisualRatioEditor'

const RATIO_KEYS: readonly OptionKey[] = ['ModelRatio', 'CompletionRatio', 'ModelPrice', 'CacheRatio', 'CreateCacheRatio', 'AudioRatio', 'AudioCompletionRatio']

/** Model prices and ratios: a visual table of the three main maps, and every map as JSON. */
export function ModelRatioCard () {
  const { t } = useTranslation()
  const notify = useNotify()
  const form = useOptionForm()
  const { reload } = useOptions()
  const [confirm, dialog] = useConfirm()
  const [view, setView] = useState<'visual' | 'json'>('visual')
  const [resetting, setResetting] = useState(false)

  const labels = {
    ModelRatio: t('settingsAdmin.fields.ModelRatio'),
    CompletionRatio: t('settingsAdmin.fields.CompletionRatio'),
    ModelPrice: t('settingsAdmin.fields.ModelPrice')
  }
  const rule = { shape: 'object', values: 'ratio' } as const
  const fields: Field[] = [
    { kind: 'json', key: 'ModelRatio', label: labels.ModelRatio, help: t('settingsAdmin.help.ModelRatio'), rule, rows: 14 },
    { kind: 'json', key: 'CompletionRatio', label: labels.CompletionRatio, help: t('settingsAdmin.help.CompletionRatio'), rule, rows: 14 },
    { kind: 'json', key: 'ModelPrice', label: labels.ModelPrice, help: t('settingsAdmin.help.ModelPrice'), rule, rows: 14 },
    { kind: 'json', key: 'CacheRatio', label: t('settingsAdmin.fields.CacheRatio'), help: t('settingsAdmin.help.CacheRatio'), rule, rows: 10 },
    { kind: 'json', key: 'CreateCacheRatio', label: t('settingsAdmin.fields.CreateCacheRatio'), help: t('settingsAdmin.help.CreateCacheRatio'), rule, rows: 10 },
    { kind: 'json', key: 'AudioRatio', label: t('settingsAdmin.fields.AudioRatio'), help: t('settingsAdmin.help.AudioRatio'), rule, rows: 10 },
    { kind: 'json', key: 'AudioCompletionRatio', label: t('settingsAdmin.fields.AudioCompletionRatio'), help: t('settingsAdmin.help.AudioCompletionRatio'), rule, rows: 10 }
  ]

  const reset = async () => {
    const ok = await confirm({ title: t('settingsAdmin.ratio.resetTitle'), body: t('settingsAdmin.ratio.resetBody'), action: t('settingsAdmin.ratio.reset'), danger: true })
    if (!ok) return
    setResetting(true)
    try {
      await resetModelRatios()
      form.discard(RATIO_KEYS)
      await reload()
      notify.success(t('settingsAdmin.ratio.resetDone'))
    } catch (err) {
      notify.error(err)
    } finally {
      setResetting(false)
    }
  }

  return (
    <OptionCard
      id='ratio'
      title={t('settingsAdmin.cards.ratio')}
      description={t('settingsAdmin.cards.ratioHelp')}
      action={<Button color='error' startIcon={<RestoreIcon />} onClick={() => { void reset() }} disabled={resetting || form.saving}>{t('settingsAdmin.ratio.reset')}</Button>}
      onSave={() => { void form.save(rulesOf(t, fields)) }}
      saving={form.saving || resetting}
    >
      <Tabs value={view} onChange={(_e, v: 'visual' | 'json') => { setView(v) }} sx={{ mb: 2, borderBottom: 1, borderColor: 'divider' }}>
        <Tab value='visual' label={t('settingsAdmin.ratio.visual')} />
        <Tab value='json' label={t('settingsAdmin.ratio.json')} />
      </Tabs>
      {view === 'visual' ? <VisualRatioEditor form={form} labels={labels} save={async (values) => await form.save(rulesOf(t, fields), values)} /> : <FieldGrid fields={fields} form={form} confirm={confirm} />}
      {dialog}
    </OptionCard>
  )
}
