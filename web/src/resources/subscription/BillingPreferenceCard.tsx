import FormControlLabel from '@mui/material/FormControlLabel'
import Paper from '@mui/material/Paper'
import Radio from '@mui/material/Radio'
import RadioGroup from '@mui/material/RadioGroup'
import Typography from '@mui/material/Typography'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useAction } from '../../lib/useAction'
import { setBillingPreference } from './api'
import { BILLING_PREFERENCES, type BillingPreference } from './types'

/** The four billing preferences, each with what it does; a choice is saved at once (and shown back as it was when refused). */
export function BillingPreferenceCard ({ value, onSaved }: { value: BillingPreference | undefined, onSaved: (p: BillingPreference) => void }) {
  const { t } = useTranslation()
  const { act, busy } = useAction()
  // The choice being saved shows at once.
  const [choice, setChoice] = useState<BillingPreference | undefined>()
  const shown = choice ?? value
  const choose = async (p: BillingPreference) => {
    const before = shown
    setChoice(p)
    const saved = await act(async () => await setBillingPreference(p), { done: t('subscription.preference.saved') })
    if (saved === undefined) setChoice(before)
    else onSaved(saved.billing_preference ?? p)
  }
  return (
    <Paper component='section' aria-label={t('subscription.preference.title')} sx={{ p: { xs: 2, sm: 3 } }}>
      <Typography variant='h6' component='h2'>{t('subscription.preference.title')}</Typography>
      <Typography variant='body2' color='text.secondary' sx={{ mb: 1 }}>{t('subscription.preference.help')}</Typography>
      <RadioGroup
        aria-label={t('subscription.preference.title')}
        value={shown ?? ''}
        onChange={(e) => { void choose(e.target.value as BillingPreference) }}
      >
        {BILLING_PREFERENCES.map((p) => (
          <FormControlLabel
            key={p}
            value={p}
            disabled={busy || shown === undefined}
            control={<Radio />}
            sx={{ alignItems: 'flex-start', my: 0.5, '& .MuiRadio-root': { pt: 0.5 } }}
            label={(
              <>
                <Typography variant='body2' component='span' sx={{ display: 'block', fontWeight: 500, pt: 0.75 }}>{t(`subscription.preference.${p}`)}</Typography>
                <Typography variant='caption' component='span' color='text.secondary' sx={{ display: 'block' }}>{t(`subscription.preference.${p}Help`)}</Typography>
              </>
            )}
          />
        ))}
      </RadioGroup>
    </Paper>
  )
}
