import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Chip from '@mui/material/Chip'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import { type FormEvent, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNotify } from '../../components/Notify'
import { OptionCard } from './OptionCard'
import { useOptionForm } from './useOptionForm'

const split = (text: string): string[] => text.split(/[,\s]+/).map((d) => d.trim()).filter((d) => d !== '')

/** The email domains registration accepts when the domain restriction is on, as removable chips. */
export function EmailWhitelistCard () {
  const { t } = useTranslation()
  const notify = useNotify()
  const form = useOptionForm()
  const [input, setInput] = useState('')
  const domains = split(form.value('EmailDomainWhitelist'))
  const restricted = form.options.EmailDomainRestrictionEnabled?.value === 'true'

  const add = (e: FormEvent) => {
    e.preventDefault()
    // Users paste "@example.com" as often as "example.com".
    const domain = input.trim().toLowerCase().replace(/^@+/, '')
    if (domain === '') {
      notify.warning(t('settingsAdmin.whitelist.empty'))
      return
    }
    if (domains.includes(domain)) {
      notify.warning(t('settingsAdmin.whitelist.duplicate', { domain }))
      return
    }
    form.set('EmailDomainWhitelist', [...domains, domain].join(','))
    setInput('')
  }
  const remove = (domain: string) => { form.set('EmailDomainWhitelist', domains.filter((d) => d !== domain).join(',')) }

  return (
    <OptionCard
      id='whitelist'
      title={t('settingsAdmin.cards.whitelist')}
      description={restricted ? t('settingsAdmin.whitelist.on') : t('settingsAdmin.whitelist.off')}
      onSave={() => { void form.save() }}
      saving={form.saving}
    >
      <Box data-testid='whitelist-domains' sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, mb: 2 }}>
        {domains.map((d) => <Chip key={d} label={d} onDelete={form.saving ? undefined : () => { remove(d) }} />)}
        {domains.length === 0 && <Typography color='text.secondary'>{t('settingsAdmin.whitelist.none')}</Typography>}
      </Box>
      <Stack component='form' noValidate onSubmit={add} direction={{ xs: 'column', sm: 'row' }} sx={{ gap: 1, alignItems: { sm: 'flex-start' } }}>
        <TextField
          size='small'
          label={t('settingsAdmin.whitelist.domain')}
          placeholder='example.com'
          value={input}
          onChange={(e) => { setInput(e.target.value) }}
          sx={{ flex: 1 }}
        />
        <Button type='submit' variant='outlined' disabled={form.saving}>{t('settingsAdmin.whitelist.add')}</Button>
      </Stack>
    </OptionCard>
  )
}
