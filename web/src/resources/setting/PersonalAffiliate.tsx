import type { UserView } from '@modelgate/contracts'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import IconButton from '@mui/material/IconButton'
import InputAdornment from '@mui/material/InputAdornment'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import ContentCopyIcon from '@mui/icons-material/ContentCopy'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { get, post } from '../../api/client'
import { useStatus } from '../../api/useStatus'
import { useNotify } from '../../components/Notify'
import { renderNumber, renderQuota } from '../../lib/format'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { PersonalCard, PersonalStat } from './PersonalCard'

/** The caller's invitation code. */
const affCode = async (): Promise<string> => await get<string>('/api/user/aff')

/** Invite link, invitation rewards, and moving the reward into the balance. */
export function PersonalAffiliate ({ self, onTransferred }: { self: UserView, onTransferred: () => void }) {
  const { t } = useTranslation()
  const { status } = useStatus()
  const notify = useNotify()
  const { data: code } = useLoad(affCode)
  const [amount, setAmount] = useState('')
  const { act, busy } = useAction()
  // The smallest transfer is one currency unit's worth of quota (QuotaPerUnit, docs/domain.md).
  const min = Math.max(1, Math.trunc(status?.quota_per_unit ?? 500_000))

  useEffect(() => { setAmount(String(self.aff_quota)) }, [self.aff_quota])

  const link = code === undefined ? '' : `${window.location.origin}/register?aff=${encodeURIComponent(code)}`
  const value = Number(amount)
  const valid = amount.trim() !== '' && Number.isInteger(value)

  const transfer = async (e: FormEvent) => {
    e.preventDefault()
    if (!valid || value < min) { notify.warning(t('setting.personal.aff.tooSmall', { min: renderQuota(min, status) })); return }
    if (value > self.aff_quota) { notify.warning(t('setting.personal.aff.tooLarge', { max: renderQuota(self.aff_quota, status) })); return }
    await act(async () => {
      await post<{ quota: number, aff_quota: number }>('/api/user/aff_transfer', { quota: value })
      notify.success(t('setting.personal.aff.transferred', { value: renderQuota(value, status) }))
      onTransferred()
    })
  }

  return (
    <PersonalCard title={t('setting.personal.aff.title')} testId='personal-aff'>
      <Typography variant='body2' color='text.secondary' sx={{ mb: 2 }}>{t('setting.personal.aff.help')}</Typography>
      <TextField
        label={t('setting.personal.aff.link')}
        value={link}
        fullWidth
        size='small'
        onFocus={(e) => { e.target.select() }}
        slotProps={{
          htmlInput: { readOnly: true, 'data-testid': 'aff-link' },
          input: {
            endAdornment: (
              <InputAdornment position='end'>
                <IconButton aria-label={t('setting.personal.aff.copyLink')} edge='end' disabled={link === ''} onClick={() => { void notify.copy(link) }}>
                  <ContentCopyIcon fontSize='small' />
                </IconButton>
              </InputAdornment>
            )
          }
        }}
      />
      <Box sx={{ display: 'grid', gridTemplateColumns: 'repeat(3, minmax(0, 1fr))', gap: 2, my: 2 }}>
        <PersonalStat label={t('setting.personal.aff.pending')} value={renderQuota(self.aff_quota, status)} testId='aff-quota' />
        <PersonalStat label={t('setting.personal.aff.history')} value={renderQuota(self.aff_history_quota, status)} />
        <PersonalStat label={t('setting.personal.aff.count')} value={renderNumber(self.aff_count)} />
      </Box>
      <Stack component='form' noValidate onSubmit={(e) => { void transfer(e) }} direction={{ xs: 'column', sm: 'row' }} sx={{ gap: 1, alignItems: { sm: 'flex-start' } }}>
        <TextField
          label={t('setting.personal.aff.amount')}
          type='number'
          size='small'
          value={amount}
          onChange={(e) => { setAmount(e.target.value) }}
          helperText={t('setting.personal.aff.amountHelp', {
            value: valid ? renderQuota(value, status) : '-',
            min: renderQuota(min, status),
            max: renderQuota(self.aff_quota, status)
          })}
          slotProps={{ htmlInput: { min, max: self.aff_quota, step: 1 } }}
          sx={{ flex: 1 }}
        />
        <Button type='submit' variant='contained' disabled={busy || self.aff_quota < min}>{t('setting.personal.aff.transfer')}</Button>
      </Stack>
    </PersonalCard>
  )
}
