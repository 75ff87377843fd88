import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import FormControlLabel from '@mui/material/FormControlLabel'
import FormHelperText from '@mui/material/FormHelperText'
import MenuItem from '@mui/material/MenuItem'
import Stack from '@mui/material/Stack'
import Switch from '@mui/material/Switch'
import TextField from '@mui/material/TextField'
import Typography from '@mui/material/Typography'
import VisibilityIcon from '@mui/icons-material/VisibilityOutlined'
import type { MultiKeyMode } from '@modelgate/contracts'
import { useTranslation } from 'react-i18next'
import { isRoot, useAuth } from '../../auth/AuthContext'
import { useVerification } from '../../components/VerifyDialog'
import { useAction } from '../../lib/useAction'
import { revealChannelKey } from './api'
import { type ChannelFormState, isMultiKey, jsonKey, KEY_HINT_TYPES } from './form'

export interface ChannelKeysProps {
  state: ChannelFormState
  /** The saved channel (undefined when creating). */
  channelId: number | undefined
  /** The stored key, only once root revealed it. */
  storedKey: string | undefined
  onReveal: (key: string) => void
}

/** The drawer's key: one or a batch of new ones, the saved channel's masked key (root may reveal it), and how several keys take turns. */
export function ChannelKeys ({ state: { form, set, errors, help, creating }, channelId, storedKey, onReveal }: ChannelKeysProps) {
  const { t } = useTranslation()
  const root = isRoot(useAuth().user)
  const { withVerification } = useVerification()
  const { act } = useAction()

  const showKey = async () => {
    if (channelId === undefined) return
    // The server wants a fresh verification first: the dialog asks for it, then the call is repeated.
    await act(async () => { onReveal(await withVerification(async () => await revealChannelKey(channelId))) })
  }

  const keyLabel = jsonKey(form.type) ? t('channel.form.keyJson') : form.batch ? t('channel.form.keyBatch') : t('channel.form.key')
  const keyHelp = !creating
    ? t('channel.form.keyEditHelp')
    : jsonKey(form.type) ? t('channel.form.keyJsonHelp') : form.batch ? t('channel.form.keyBatchHelp') : KEY_HINT_TYPES.includes(form.type) ? t(`channel.form.keyHint.t${form.type}`) : t('channel.form.keyHelp')

  return (
    <>
      {creating && (
        <Box>
          <FormControlLabel control={<Switch checked={form.batch} onChange={(e) => { set('batch', e.target.checked) }} />} label={t('channel.form.batch')} />
          <FormHelperText sx={{ mt: 0 }}>{t('channel.form.batchHelp')}</FormHelperText>
        </Box>
      )}
      <Box>
        <TextField
          label={keyLabel}
          value={form.key}
          required={creating}
          fullWidth
          multiline
          minRows={form.batch || jsonKey(form.type) ? 4 : 1}
          autoComplete='off'
          onChange={(e) => { set('key', e.target.value) }}
          error={errors.key !== undefined}
          helperText={help('key', keyHelp)}
          slotProps={{ htmlInput: { spellCheck: false } }}
        />
        {!creating && (
          <Stack direction='row' data-testid='stored-key-hint' sx={{ mt: 1, alignItems: 'center', gap: 1, flexWrap: 'wrap' }}>
            <Typography variant='body2' color='text.secondary' sx={{ overflowWrap: 'anywhere' }}>
              {form.storedKeyCount > 1
                ? t('channel.form.storedHintMany', { count: form.storedKeyCount, hint: form.storedKeyHint })
                : t('channel.form.storedHint', { hint: form.storedKeyHint === '' ? '-' : form.storedKeyHint })}
            </Typography>
            {root && storedKey === undefined && (
              <Button size='small' startIcon={<VisibilityIcon />} onClick={() => { void showKey() }}>{t('channel.form.showKey')}</Button>
            )}
          </Stack>
        )}
        {!creating && storedKey !== undefined && (
          <TextField
            label={t('channel.form.storedKey')}
            value={storedKey}
            fullWidth
            multiline
            size='small'
            sx={{ mt: 1.5 }}
            helperText={t('channel.form.revealHelp')}
            slotProps={{ htmlInput: { readOnly: true, spellCheck: false } }}
          />
        )}
      </Box>

      {isMultiKey(form) && (
        <TextField
          select
          label={t('channel.form.multiKeyMode')}
          value={form.multiKeyMode}
          onChange={(e) => { set('multiKeyMode', e.target.value as MultiKeyMode) }}
          helperText={t('channel.form.multiKeyModeHelp')}
        >
          <MenuItem value='random'>{t('channel.form.multiKeyRandom')}</MenuItem>
          <MenuItem value='polling'>{t('channel.form.multiKeyPolling')}</MenuItem>
        </TextField>
      )}
    </>
  )
}
