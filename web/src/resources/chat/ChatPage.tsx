import Alert from '@mui/material/Alert'
import Box from '@mui/material/Box'
import { useEffect, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNavigate, useParams } from 'react-router-dom'
import { useStatus } from '../../api/useStatus'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { chatEntries } from '../../layout/nav'
import { chatUrl, firstEnabledKey, serverAddress } from './links'

/** Embeds the chat link `id` of the Chats option, filled with the user's first enabled key. */
export default function ChatPage () {
  const { t } = useTranslation()
  const { id = '0' } = useParams()
  const { status } = useStatus()
  const { user } = useAuth()
  const notify = useNotify()
  const navigate = useNavigate()
  const [url, setUrl] = useState<string | undefined>()
  const [problem, setProblem] = useState<string | undefined>()
  const entry = chatEntries(status?.chats)[Number(id)]

  useEffect(() => {
    if (status === undefined) return
    if (entry === undefined) {
      setProblem(t(chatEntries(status.chats).length === 0 ? 'chat.noLinks' : 'chat.badLink'))
      return
    }
    if (user === undefined) {
      navigate('/login', { state: { from: `/chat/${id}` } })
      return
    }
    let live = true
    firstEnabledKey().then((key) => {
      if (!live) return
      if (key === undefined) {
        notify.error(t('chat.noToken'))
        setTimeout(() => { navigate('/token') }, 1500)
        return
      }
      setUrl(chatUrl(entry.url, key, serverAddress(status.server_address)))
    }, (err: unknown) => { if (live) notify.error(err) })
    return () => { live = false }
  }, [status, entry, user, id, navigate, notify, t])

  if (problem !== undefined) return <Alert severity='warning'>{problem}</Alert>
  if (url === undefined) return null
  return <Box component='iframe' src={url} title={entry?.name ?? 'chat'} sx={{ width: '100%', height: 'calc(100vh - 150px)', border: 0 }} />
}
