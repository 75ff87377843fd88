import type { ChannelTagRow } from '@modelgate/contracts'
import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import Button from '@mui/material/Button'
import Dialog from '@mui/material/Dialog'
import DialogActions from '@mui/material/DialogActions'
import DialogContent from '@mui/material/DialogContent'
import DialogContentText from '@mui/material/DialogContentText'
import DialogTitle from '@mui/material/DialogTitle'
import Stack from '@mui/material/Stack'
import TextField from '@mui/material/TextField'
import useMediaQuery from '@mui/material/useMediaQuery'
import { useTheme } from '@mui/material/styles'
import { type FormEvent, useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { MultiSelect } from '../../components/MultiSelect'
import { useNotify } from '../../components/Notify'
import { useAction } from '../../lib/useAction'
import { useLoad } from '../../lib/useLoad'
import { editTag, knownModels } from './api'
import { splitNames, tagBodyOf, type TagErrors, type TagForm, tagFormOf, validateTag } from './form'
import { PriorityWeightFields } from './PriorityWeightFields'

export interface TagDialogProps {
  /** The tag row being edited; undefined closes the dialog. */
  row: ChannelTagRow | undefined
  groups: string[]
  onClose: () => void
  onSaved: () => void
}

/** The tag edit dialog: overwrites fields on every channel of a tag; blank keeps them. */
export function TagDialog ({ row: open, groups, onClose, onSaved }: TagDialogProps) {
  const { t } = useTranslation()
  const notify = useNotify()
  const theme = useTheme()
  const small = useMediaQuery(theme.breakpoints.down('sm'))
  const [form, setForm] = useState<TagForm>(tagFormOf(''))
  const [errors, setErrors] = useState<TagErrors>({})
  const { act, busy: saving } = useAction()
  // Kept while the dialog fades out, so its content does not go blank meanwhile.
  const [row, setRow] = useState(open)
  if (open !== undefined && open !== row) setRow(open)
  const tag = row?.tag

  // Read each time the dialog opens.
  const models = useLoad(open === undefined ? undefined : knownModels, { initial: [] }).data

  useEffect(() => {
    if (tag === undefined || open === undefined) return
    setForm(tagFormOf(tag))
    setErrors({})
  }, [tag, open])

  const set = <K extends keyof TagForm>(key: K, value: TagForm[K]) => {
    setForm((f) => ({ ...f, [key]: value }))
    setErrors((e) => ({ ...e, [key]: undefined }))
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    if (tag === undefined) return
    const found = validateTag(form)
    setErrors(found)
    const first = Object.values(found)[0]
    if (first !== undefined) {
      notify.error(t(first))
      return
    }
    const body = tagBodyOf(tag, form)
    // docs/domain.md: a tag edit that changes nothing is refused.
    if (body === undefined) {
      notify.warning(t('channel.tag.nothingChanged'))
      return
    }
    await act(async () => {
      notify.success(t('channel.tag.saved', { count: await editTag(body) }))
      onSaved()
    })
  }

  const current = (value: number | null | undefined) => value === null || value === undefined ? t('channel.tag.keepHelp') : t('channel.tag.current', { value })
  const error = (key: keyof TagErrors, fallback: string) => {
    const found = errors[key]
    return found === undefined ? fallback : t(found)
  }
  const modelOptions = [...new Set([...models, ...splitNames(row?.models ?? ''), ...form.models])]
  const groupOptions = [...new Set([...groups, ...form.groups])]
  const title = t('channel.tag.title', { tag: tag ?? '' })

  return (
    <Dialog open={open !== undefined} onClose={onClose} fullWidth maxWidth='sm' fullScreen={small}>
      <Box component='form' noValidate onSubmit={(e) => { void submit(e) }} aria-label={title}>
        <DialogTitle>{title}</DialogTitle>
        <DialogContent>
          <DialogContentText sx={{ mb: 2 }}>{t('channel.tag.intro')}</DialogContentText>
          <Stack spacing={2.5}>
            <Box>
              <TextField
                label={t('channel.tag.newTag')}
                value={form.newTag}
                fullWidth
                onChange={(e) => { set('newTag', e.target.value) }}
                helperText={t('channel.tag.newTagHelp')}
              />
              {form.newTag.trim() === '' && <Alert severity='warning' sx={{ mt: 1 }}>{t('channel.tag.dissolves')}</Alert>}
            </Box>
            <Box>
              <MultiSelect
                label={t('channel.tag.models')} helperText={t('channel.tag.modelsHelp')}
                options={modelOptions} value={form.models} onChange={(value) => { set('models', value) }}
              />
              <Button size='small' sx={{ mt: 0.5 }} onClick={() => { set('models', splitNames(row?.models ?? '')) }}>{t('channel.tag.useCurrentModels')}</Button>
            </Box>
            <MultiSelect
              label={t('channel.tag.groups')} helperText={t('channel.tag.groupsHelp')}
              options={groupOptions} value={form.groups} onChange={(value) => { set('groups', value) }}
            />
            <TextField
              label={t('channel.tag.modelMapping')}
              value={form.modelMapping}
              multiline
              minRows={3}
              onChange={(e) => { set('modelMapping', e.target.value) }}
              error={errors.modelMapping !== undefined}
              helperText={error('modelMapping', t('channel.tag.modelMappingHelp'))}
              slotProps={{ htmlInput: { spellCheck: false } }}
            />
            <PriorityWeightFields
              values={form} onChange={set} errors={errors}
              help={{ priority: error('priority', current(row?.priority)), weight: error('weight', current(row?.weight)) }}
            />
          </Stack>
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type='submit' variant='contained' disabled={saving}>{t('common.save')}</Button>
        </DialogActions>
      </Box>
    </Dialog>
  )
}
