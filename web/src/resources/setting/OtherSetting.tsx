import type { OptionKey } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Paper from '@mui/material/Paper'
import Stack from '@mui/material/Stack'
import Typography from '@mui/material/Typography'
import PreviewIcon from '@mui/icons-material/VisibilityOutlined'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Html, isUrl } from '../../components/Html'
import { useConfirm } from '../../components/Confirm'
import { type Field, FieldGrid, FieldsCard, OptionCard, rulesOf } from '../settings-admin/OptionCard'
import { OptionsProvider } from '../settings-admin/OptionsProvider'
import { useOptionForm } from '../settings-admin/useOptionForm'

/** The super admin's other options: public texts and branding. */
export default function OtherSetting () {
  const { t } = useTranslation()
  return (
    <OptionsProvider>
      <Stack sx={{ gap: 2 }}>
        <FieldsCard
          id='brand'
          title={t('settingsAdmin.cards.brand')}
          fields={[
            { kind: 'text', key: 'SystemName', label: t('settingsAdmin.fields.SystemName'), help: t('settingsAdmin.help.SystemName') },
            { kind: 'text', key: 'Logo', label: t('settingsAdmin.fields.Logo'), help: t('settingsAdmin.help.Logo'), placeholder: 'https://example.com/logo.png' }
          ]}
          extra={(form) => form.value('Logo').trim() !== '' && (
            <Stack direction='row' sx={{ alignItems: 'center', gap: 1, mt: 2 }}>
              <Typography variant='body2' color='text.secondary'>{t('settingsAdmin.content.logoPreview')}</Typography>
              <Box component='img' src={form.value('Logo').trim()} alt='' sx={{ height: 32, width: 32, objectFit: 'contain' }} />
            </Stack>
          )}
        />
        <ContentCard id='notice' optionKey='Notice' title={t('settingsAdmin.cards.notice')} help={t('settingsAdmin.help.Notice')} markdown />
        <ContentCard id='home' optionKey='HomePageContent' title={t('settingsAdmin.cards.home')} help={t('settingsAdmin.help.HomePageContent')} markdown frame />
        <ContentCard id='about' optionKey='About' title={t('settingsAdmin.cards.about')} help={t('settingsAdmin.help.About')} markdown frame />
        <ContentCard id='footer' optionKey='Footer' title={t('settingsAdmin.cards.footer')} help={t('settingsAdmin.help.Footer')} />
      </Stack>
    </OptionsProvider>
  )
}

/**
 * One public text (Markdown, or HTML; with `frame`, a URL is embedded instead) with a preview
 * rendered the way the public page renders it.
 */
function ContentCard ({ id, optionKey, title, help, markdown = false, frame = false }: { id: string, optionKey: OptionKey, title: string, help: string, markdown?: boolean, frame?: boolean }) {
  const { t } = useTranslation()
  const form = useOptionForm()
  const [confirm, dialog] = useConfirm()
  const [preview, setPreview] = useState(false)
  const fields: Field[] = [{ kind: 'text', key: optionKey, label: title, help, rows: 6 }]
  const value = form.value(optionKey)

  return (
    <OptionCard
      id={id}
      title={title}
      action={<Button size='small' startIcon={<PreviewIcon />} onClick={() => { setPreview(!preview) }} aria-pressed={preview}>{preview ? t('settingsAdmin.content.hidePreview') : t('settingsAdmin.content.preview')}</Button>}
      onSave={() => { void form.save(rulesOf(t, fields)) }}
      saving={form.saving}
    >
      <FieldGrid fields={fields} form={form} confirm={confirm} />
      {preview && (
        <Paper variant='outlined' data-testid={`preview-${id}`} sx={{ mt: 2, p: 2, overflowX: 'auto' }}>
          {value.trim() === ''
            ? <Typography color='text.secondary'>{t('settingsAdmin.content.emptyPreview')}</Typography>
            : frame && isUrl(value)
              ? <Typography>{t('settingsAdmin.content.framed', { url: value.trim() })}</Typography>
              : <Html html={value} markdown={markdown} />}
        </Paper>
      )}
      {dialog}
    </OptionCard>
  )
}
