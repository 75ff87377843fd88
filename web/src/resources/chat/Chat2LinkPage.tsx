import Alert from '@mui/material/Alert'
import Typography from '@mui/material/Typography'
import { useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNavigate } from 'react-router-dom'
import { useStatus } from '../../api/useStatus'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { chatUrl, firstEnabledKey, serverAddress } from './links'

/** Sends the browser to the ChatLink option's chat client, filled with the user's first enabled key. */
export default function Chat2LinkPage () {
  const { t } = useTranslation()
  const { status } = useStatus()
  const { user } = useAuth()
  const notify = useNotify()
  const navigate = useNavigate()
  const [problem, setProblem] = useState<string | undefined>()

  useEffect(() => {
    if (status === undefined) return
    if (status.chat_link === '') {
      setProblem(t('chat.noLinks'))
      return
    }
    if (user === undefined) {
      navigate('/login', { state: { from: '/chat2link' } })
      return
    }
    firstEnabledKey().then((key) => {
      if (key === undefined) {
        notify.error(t('chat.noToken'))
        setTimeout(() => { navigate('/token') }, 1500)
        return
      }
      window.location.href = chatUrl(status.chat_link, key, serverAddress(status.server_address))
    }, (err: unknown) => { notify.error(err) })
  }, [status, user, navigate, notify, t])

  if (problem !== undefined) return <Alert severity='warning'>{problem}</Alert>
  return <Typography color='text.secondary'>{t('chat.redirecting')}</Typography>
}
